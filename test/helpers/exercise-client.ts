import type { GpuRentalClient } from "../../sdk";

/** The ids some verbs name: an endpoint and a worker group (found in listings by id), and an offer to rent (else one searched for). */
interface Ids {
  endpoint: number;
  workerGroup: number;
  offer?: number;
}

/**
 * Each verb of the client, called once with arguments that reach the service: the vendor-description judge and
 * the Prism judge both send every call the SDK makes through it.
 */
export function exercise(client: GpuRentalClient, ids: Ids = { endpoint: 1001, workerGroup: 2001 }): Record<string, Record<string, () => Promise<unknown>>> {
  const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl judge@test";
  const code = { tfa_method: "totp", code: "000000" };
  const offer = async () => ids.offer ?? (await client.offers.search({ limit: 1 }))[0].id;
  return {
    offers: { search: () => client.offers.search({ limit: 1 }) },
    instances: {
      create: async () => client.instances.create(await offer(), { image: "x" }),
      list: () => client.instances.list(),
      get: () => client.instances.get(1),
      update: () => client.instances.update(1, { label: "x" }),
      start: () => client.instances.start(1),
      stop: () => client.instances.stop(1),
      changeBid: () => client.instances.changeBid(1, 0.17),
      reboot: () => client.instances.reboot(1),
      recycle: () => client.instances.recycle(1),
      destroy: () => client.instances.destroy(1),
      logs: () => client.instances.logs(1, { tail: 10 }),
      execute: () => client.instances.execute(1, "ls"),
      prepay: () => client.instances.prepay(1, 1),
      deposit: () => client.instances.deposit(1),
    },
    copies: {
      start: () => client.copies.start({ instanceId: 1, path: "/root/" }, { instanceId: 2, path: "/root/" }),
      cancel: () => client.copies.cancel(2),
    },
    cloudCopies: {
      connections: () => client.cloudCopies.connections(),
      start: () => client.cloudCopies.start({ instanceId: 1, connectionId: 1, direction: "toCloud", instancePath: "/root", cloudPath: "/x" }),
      cancel: () => client.cloudCopies.cancel(1),
    },
    account: {
      transferCredit: () => client.account.transferCredit("nobody@example.com", 1),
      update: () => client.account.update({ fullname: "Judged" }),
      ipAddresses: () => client.account.ipAddresses(),
      auditLogs: () => client.account.auditLogs(),
    },
    notifications: {
      types: () => client.notifications.types(),
      preferences: () => client.notifications.preferences(),
      setPreferences: () => client.notifications.setPreferences({ client: { outbid: { email: true, webhooks: true } } }),
    },
    benchmarks: { search: () => client.benchmarks.search({ num_gpus: { eq: 8 } }) },
    gpuMetrics: {
      current: () => client.gpuMetrics.current(),
      history: () => client.gpuMetrics.history(["RTX 4090"]),
      locations: () => client.gpuMetrics.locations(),
      prices: () => client.gpuMetrics.prices("RTX 4090"),
    },
    templates: {
      search: () => client.templates.search({ name: { eq: "x" } }),
      get: () => client.templates.get(1),
      create: () => client.templates.create({ name: "judged", image: "x", docker_login_repo: "", docker_login_user: "", docker_login_pass: "" }),
      edit: () => client.templates.edit("no-such-hash", { onstart: "x" }),
      delete: () => client.templates.delete(1),
    },
    volumes: {
      searchNetworkOffers: () => client.volumes.searchNetworkOffers({ limit: 1 }),
      searchLocalOffers: () => client.volumes.searchLocalOffers({ limit: 1 }),
      createLocal: async () => client.volumes.createLocal({ offerId: (await client.volumes.searchLocalOffers({ limit: 1 }))[0].ask_contract_id, size: 1, name: "judged_local" }),
      createNetwork: async () => client.volumes.createNetwork({ offerId: (await client.volumes.searchNetworkOffers({ limit: 1 }))[0].ask_contract_id, size: 1, name: "judged" }),
      list: () => client.volumes.list(),
      get: () => client.volumes.get(1),
      delete: () => client.volumes.delete(1),
    },
    sshKeys: {
      add: () => client.sshKeys.add(KEY),
      list: () => client.sshKeys.list(),
      update: () => client.sshKeys.update(1_000, KEY),
      delete: () => client.sshKeys.delete(1_000),
      attach: () => client.sshKeys.attach(1, KEY),
      ofInstance: () => client.sshKeys.ofInstance(1),
      detach: () => client.sshKeys.detach(1, 1_000),
    },
    envVars: {
      create: () => client.envVars.create("JUDGED", "x"),
      list: () => client.envVars.list(),
      update: () => client.envVars.update("JUDGED", "y"),
      delete: () => client.envVars.delete("JUDGED"),
    },
    teams: {
      create: () => client.teams.create("judged", { transferCredit: 0 }),
      destroy: () => client.teams.destroy(),
    },
    teamRoles: {
      create: () => client.teamRoles.create("judged", { api: { instance_read: {} } }),
      list: () => client.teamRoles.list(),
      get: () => client.teamRoles.get("4"), // the judge reads a path segment of digits as the parameter
      update: () => client.teamRoles.update(4, { name: "judged2", permissions: { api: { instance_read: {} } } }),
      delete: () => client.teamRoles.delete("4"),
    },
    teamMembers: {
      invite: () => client.teamMembers.invite("judged@example.com", "member"),
      list: () => client.teamMembers.list(),
      remove: () => client.teamMembers.remove(999),
    },
    subaccounts: {
      create: () => client.subaccounts.create({ email: "judged-sub@example.com", username: "judged", password: "pw-judged" }),
      list: () => client.subaccounts.list(),
    },
    webhooks: {
      list: () => client.webhooks.list(),
      get: () => client.webhooks.get(1),
      create: () => client.webhooks.create({ name: "judged", webhook_url: "http://127.0.0.1:9/hook", event_types: ["client:outbid"] }),
      update: () => client.webhooks.update(1001, { name: "judged2" }),
      rotateSecret: () => client.webhooks.rotateSecret(1001),
      test: () => client.webhooks.test(1001),
      delete: () => client.webhooks.delete(1001),
    },
    priceIncreases: {
      list: () => client.priceIncreases.list(),
      accept: () => client.priceIncreases.accept(1),
      reject: () => client.priceIncreases.reject(1),
    },
    apiKeys: {
      create: () => client.apiKeys.create({ name: "judged" }),
      list: () => client.apiKeys.list(),
      get: () => client.apiKeys.get(1_000),
      delete: () => client.apiKeys.delete(1_000),
    },
    tfa: {
      status: () => client.tfa.status(),
      login: () => client.tfa.login(code),
      sendEmailCode: () => client.tfa.sendEmailCode(),
      sendSmsCode: () => client.tfa.sendSmsCode({ phone_number: "+14155550123" }),
      resendSmsCode: () => client.tfa.resendSmsCode({ phone_number: "+14155550123" }),
      setupTotp: () => client.tfa.setupTotp(),
      authorizeNewMethod: () => client.tfa.authorizeNewMethod({ tfa_method: "email" }),
      confirmAuthorization: () => client.tfa.confirmAuthorization({ code: "000000", secret: "x" }),
      confirmNewMethod: () => client.tfa.confirmNewMethod({ ...code, secret: "x" }),
      removeMethod: () => client.tfa.removeMethod(code),
      updateMethod: () => client.tfa.updateMethod({ tfa_method: "totp", label: "x" }),
      regenerateBackupCodes: () => client.tfa.regenerateBackupCodes(code),
      sendTestSms: () => client.tfa.sendTestSms({ phone_number: "+14155550123" }),
      submitTestCode: () => client.tfa.submitTestCode({ ...code, secret: "x" }),
      resendTestSms: () => client.tfa.resendTestSms({ phone_number: "+14155550123" }),
    },
    endpoints: {
      list: () => client.endpoints.list(),
      get: () => client.endpoints.get(1),
      create: () => client.endpoints.create({ endpoint_name: "judged", cold_workers: 0, max_workers: 1 }),
      update: () => client.endpoints.update(ids.endpoint, { max_workers: 2 }),
      workers: () => client.endpoints.workers(ids.endpoint),
      logs: () => client.endpoints.logs(ids.endpoint, 10),
      delete: () => client.endpoints.delete(ids.endpoint),
    },
    workerGroups: {
      list: () => client.workerGroups.list(),
      get: () => client.workerGroups.get(1),
      create: () => client.workerGroups.create({ endpoint_id: ids.endpoint, template_hash: "no-such-hash" }),
      update: () => client.workerGroups.update(ids.workerGroup, { gpu_ram: 16 }),
      logs: () => client.workerGroups.logs(ids.workerGroup, 10),
      workers: () => client.workerGroups.workers(ids.workerGroup),
      rollWorkers: () => client.workerGroups.rollWorkers(ids.workerGroup),
      delete: () => client.workerGroups.delete(ids.workerGroup),
    },
    deployments: {
      list: () => client.deployments.list(),
      get: () => client.deployments.get(501),
      versions: () => client.deployments.versions(501),
      put: () => client.deployments.put({ name: "judged", image: "vastai/base-image", file_hash: "0".repeat(64), file_size: 10, cold_workers: 0, max_workers: 1 }),
      heartbeat: () => client.deployments.heartbeat(501),
      stop: () => client.deployments.stop(501),
      start: () => client.deployments.start(501),
      downloadUrl: () => client.deployments.downloadUrl(501),
      delete: () => client.deployments.delete(501),
      deleteByName: () => client.deployments.deleteByName("judged"),
    },
    users: { current: () => client.users.current() },
    billing: { invoices: () => client.billing.invoices() },
  };
}
