import * as fs from "node:fs";
import * as path from "node:path";
import { ed25519KeyPair } from "../../emulator";
import { DEFAULT_ORDER, GpuRentalClient, offerQuery } from "../../sdk";
import { AccountProgram, checkAccountAsCode } from "./account-as-code";
import { DocMachine, loginWith, pageScript, portIsFree, scriptOf, terminalsOf } from "./doc-program";

/** The account as code in YAML (./account-as-code.ts says what it declares and what is checked). */
const ACCOUNT_PROGRAM = `name: yaml-account
runtime: yaml
config:
  receiverUrl:
    type: string
  hfToken:
    type: string
  childPassword:
    type: string
  bid:
    default: 9.5
resources:
  team:
    type: gpu-rental:index:Team
    properties:
      name: research
  ci:
    type: gpu-rental:index:TeamRole
    properties:
      name: ci
      permissions:
        api:
          misc: {}
          instance_read: {}
          instance_write: {}
    options:
      dependsOn:
        - \${team}
  bot:
    type: gpu-rental:index:TeamMember
    properties:
      email: yaml-bot@gpu-rental.test
      role: ci
    options:
      dependsOn:
        - \${ci}
  child:
    type: gpu-rental:index:Subaccount
    properties:
      email: yaml-child@example.com
      username: yaml_child
      password: \${childPassword}
  hf:
    type: gpu-rental:index:EnvVar
    properties:
      name: HF_TOKEN
      value: \${hfToken}
  project:
    type: gpu-rental:index:EnvVar
    properties:
      name: wandb_project
      value: research
  ops:
    type: gpu-rental:index:Webhook
    properties:
      url: \${receiverUrl}
      eventTypes: [client:outbid]
      name: ops
  cache:
    type: gpu-rental:index:LocalVolume
    properties:
      size: 5
      name: cache
  worker:
    type: gpu-rental:index:Instance
    properties:
      offerId: \${cache.askContractId}
      offerType: bid
      price: \${bid}
      image: pytorch/pytorch
      volumes:
        /data: \${cache.volumeId}
      onstart: echo "$WANDB_PROJECT $HF_TOKEN" >> /data/seen
    options:
      dependsOn:
        - \${hf}
        - \${project}
outputs:
  workerId: \${worker.instanceId}
  volumeId: \${cache.volumeId}
  webhookSecret: \${ops.secret}
`;

/** The page's emulator, as it starts it, and its key as the page gives it. */
const URL = "http://127.0.0.1:8769";
const KEY = "local-dev-key-1";
const client = new GpuRentalClient({ apiUrl: URL, apiKey: KEY, minRetryDelayMs: 5 });

/** What the account holds, as the service answers it (ids). */
async function holdings() {
  const [instances, volumes, templates, apiKeys, sshKeys] = await Promise.all([
    client.instances.list(), client.volumes.list("network_volume"), client.templates.search(), client.apiKeys.list(), client.sshKeys.list(),
  ]);
  const ids = (list: { id: number }[]) => list.map((x) => x.id).sort();
  return { instances: ids(instances), volumes: ids(volumes), templates: ids(templates.filter((t) => t.name === "yaml-worker")), apiKeys: ids(apiKeys), sshKeys: ids(sshKeys) };
}

/**
 * A YAML program set up and deployed literally as docs/yaml.md says, nothing swapped in (the package from the local
 * registry, the plugin installed by `npx gpu-rental plugin install`, the page's emulator in a terminal of its own,
 * the SSH keys made by the page), then driven by the real engine: the docs' `up` (an SshKey, the trainer logged into over the emulator's SSH with it and with a key
 * attached by `sshKeys`, `fn::invoke` of getOffers answering what the SDK's search answers), an `up` that must
 * change nothing, a label change and the attached key's removal made in place (that key then refused), refresh, `pulumi import` of an SSH key made by hand, destroy, nothing left behind, the plugin still working with the package removed, the API keys
 * nowhere in plaintext, and mistakes (the input misspelt, a filter's field, operator or operand, a key that is not
 * one, a negative limit) refused at preview naming the input.
 */
describe("a YAML program, as docs/yaml.md sets it up", () => {
  let machine: DocMachine;
  let output: string;
  const dir = "gpu-yaml";
  /** The private keys the page made: the user's (~/.ssh/id_ed25519) and the CI runner's stand-in (ci_ed25519). */
  const keys = { mine: "", ci: "" };

  beforeAll(async () => {
    expect(await portIsFree(8769)).toBe(true);
    machine = await DocMachine.start("yaml-docs");
    const page = pageScript("docs/yaml.md", ["Set up", "Deploy"]);
    expect(terminalsOf(page)).toEqual(["npx gpu-rental emulator --port 8769 --api-key local-dev-key-1"]);
    expect(scriptOf("yaml.md", ["Set up"])).toMatch(/npx gpu-rental plugin install/);
    output = await machine.followPage(page, [/Control API/]);
    keys.mine = fs.readFileSync(path.join(machine.home, ".ssh", "id_ed25519"), "utf8");
    keys.ci = fs.readFileSync(path.join(machine.home, dir, "ci_ed25519"), "utf8");
  }, 600_000);
  afterAll(async () => {
    await machine?.run("pulumi destroy --yes && pulumi stack rm --yes --force", dir);
    await machine?.close();
  });

  it("created the template, the instance made from it and the API key in the account", async () => {
    expect(output).toMatch(/\+ 5 created/);
    const held = await holdings();
    expect(held.instances).toHaveLength(1);
    expect(held.templates).toHaveLength(1);
    // The page's key and the one the program made.
    expect(held.apiKeys).toHaveLength(2);
    expect(held.sshKeys).toHaveLength(1);
    const [instance] = await client.instances.list();
    expect(instance.label).toBe("trainer");
  });

  it("lets both the account's key and the key attached by sshKeys log into the trainer; fn::invoke of getOffers answers what the SDK's search answers", async () => {
    const ssh = (await machine.ok("pulumi stack output ssh", dir)).trim();
    for (const key of [keys.mine, keys.ci]) expect(await loginWith({}, ssh, key)).toMatch(/^logged in to \d+$/);

    const offers = JSON.parse(await machine.ok("pulumi stack output h100Offers --json", dir)) as { id: number }[];
    const searched = await client.offers.search(
      offerQuery({ filters: { gpu_name: { eq: "H100 SXM" }, reliability: { gte: 0.9 } }, order: DEFAULT_ORDER, candidatesPerSearch: 3 }),
    );
    expect(searched).toHaveLength(3);
    expect(offers.map((o) => o.id)).toEqual(searched.map((o) => o.id));
    expect(offers[0]).toMatchObject({ gpuName: "H100 SXM", pricePerHour: searched[0].dph_total });
  });

  it("keeps the account's key and the key the program made out of state and output", async () => {
    const made = await machine.secretOutput("ciKey", dir);
    expect(made).toMatch(/^\S{16,}$/);
    const state = machine.stateText(dir);
    expect(state).toMatch(/secure|ciphertext/);
    for (const secret of [KEY, made]) {
      expect(state).not.toContain(secret);
      expect(machine.transcript.join("\n")).not.toContain(secret);
    }
  });

  it("passes the page's CI test, its command as printed (a throwaway emulator of its own: this one untouched)", async () => {
    const before = await holdings();
    const output = await machine.ok(scriptOf("yaml.md", ["Test it as CI does"]), dir);
    expect(output).toMatch(/gpu-rental test: (\d+) of \1 steps passed/);
    expect(await holdings()).toEqual(before);
  }, 600_000);

  it("changes nothing on a second up, changes the label and detaches the CI key in place, refreshes, adopts an SSH key by import, then destroys everything", async () => {
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/5 unchanged/);

    // A new label and the CI key detached: one update of the trainer in place; the CI key then logs in no more.
    const [before] = await client.instances.list();
    const update = await machine.ok("pulumi config set label renamed && pulumi config rm trainerSshKeys && pulumi up --yes", dir);
    expect(update).toMatch(/~ 1 updated/);
    expect(update).not.toMatch(/replaced/);
    const [after] = await client.instances.list();
    expect(after.id).toBe(before.id);
    expect(after.label).toBe("renamed");
    const ssh = (await machine.ok("pulumi stack output ssh", dir)).trim();
    await expect(loginWith({}, ssh, keys.ci)).rejects.toThrow(/authentication methods failed/);
    expect(await loginWith({}, ssh, keys.mine)).toBe(`logged in to ${after.id}`);

    await machine.ok("pulumi refresh --yes", dir);
    expect(await machine.ok("pulumi up --yes --expect-no-changes", dir)).toMatch(/5 unchanged/);

    // A key registered by hand (a script, the console): the docs' import, with its id, then no changes.
    const laptop = await client.sshKeys.add(ed25519KeyPair("me@other-laptop").public);
    const adopted = await machine.ok(scriptOf("yaml.md", ["Adopt what was made elsewhere"]).replaceAll("4343", String(laptop.id)), dir);
    expect(adopted).toMatch(/= 1 imported/);
    expect(adopted).toMatch(/6 unchanged/);
    expect(await machine.ok("cat Pulumi.yaml", dir)).toMatch(/^ {2}laptop:\n {4}type: gpu-rental:(index:)?SshKey$/m);

    expect(await machine.ok("pulumi destroy --yes", dir)).toMatch(/- 6 deleted/);
    expect(await holdings()).toEqual({ instances: [], volumes: [], templates: [], apiKeys: [expect.any(Number)], sshKeys: [] });
    // The installed plugin needs nothing of the folder it was installed from: with the package gone, a preview
    // still runs it (getOffers answered).
    const preview = await machine.ok("rm -rf node_modules package.json package-lock.json && pulumi preview", dir);
    expect(preview).toMatch(/\+ 6 to create/);
    expect(preview).toMatch(/gpuName +: "H100 SXM"/);
  }, 600_000);

  /** Mistakes YAML lets through to the engine, each its own project: preview fails naming the input, nothing made. */
  const instanceWith = (properties: string) =>
    `resources:\n  worker:\n    type: gpu-rental:index:Instance\n    properties:\n      image: pytorch/pytorch\n      gpuModel: RTX 4090\n      ${properties}\n`;
  const MISTAKES: Record<string, { program: string; fails: RegExp }> = {
    // Refused by the YAML host's own check of the program against the schema, before the provider sees it.
    "misspelt-input": { program: instanceWith("maxLifetme: 10m"), fails: /Property maxLifetme does not exist on 'gpu-rental:index:Instance'/ },
    "misspelt-filter": { program: instanceWith("filters:\n        reliabilty:\n          gte: 0.99"), fails: /filters\.reliabilty: not a field the search filters on .*did you mean reliability\?/ },
    "operand-type": { program: instanceWith("filters:\n        reliability:\n          gte: high"), fails: /filters\.reliability\.gte: reliability takes a number/ },
    "unknown-operator": { program: instanceWith("filters:\n        gpu_ram:\n          greater: 24000"), fails: /filters\.gpu_ram\.greater: not an operator/ },
    "not-a-key": {
      program: "resources:\n  login:\n    type: gpu-rental:index:SshKey\n    properties:\n      publicKey: not-a-key me@laptop\n",
      fails: /publicKey: .*not an OpenSSH public key/,
    },
    "env-var-name": {
      program: "resources:\n  hf:\n    type: gpu-rental:index:EnvVar\n    properties:\n      name: 1HF_TOKEN\n      value: x\n",
      fails: /name: .*letters, digits and underscores/,
    },
    "volume-too-large": {
      program: "resources:\n  cache:\n    type: gpu-rental:index:LocalVolume\n    properties:\n      size: 100000000\n",
      fails: /property size .*No local volume offer has 100000000 GB free/,
    },
    "permission-category": {
      program: "resources:\n  ci:\n    type: gpu-rental:index:TeamRole\n    properties:\n      name: ci\n      permissions:\n        api:\n          gpus: {}\n",
      fails: /permissions.*Unknown permission categories: gpus/,
    },
    "webhook-url": {
      program: "resources:\n  ops:\n    type: gpu-rental:index:Webhook\n    properties:\n      url: not a url\n      eventTypes: [client:outbid]\n",
      fails: /url: /,
    },
    "webhook-event": {
      program: "resources:\n  ops:\n    type: gpu-rental:index:Webhook\n    properties:\n      url: https://hooks.example.com/x\n      eventTypes: [client:nope]\n",
      fails: /eventTypes.*client:nope|eventTypes\.0/,
    },
    "negative-limit": {
      program: "variables:\n  offers:\n    fn::invoke:\n      function: gpu-rental:index:getOffers\n      arguments:\n        limit: -1\n",
      fails: /Invalid getOffers: limit: limit must be a whole number from 1 to 1000/,
    },
  };

  it("fails preview naming the input for a misspelt input, a misspelt filter, an operand of the wrong type, an unknown operator, an SSH key that is not one, a negative limit, an env var name, a volume larger than any offer, a permission category, a webhook URL or event type, making nothing", async () => {
    const before = await holdings();
    const previews = await Promise.all(
      Object.entries(MISTAKES).map(async ([name, { program }]) => {
        const folder = `mistake-${name}`;
        await machine.ok(`mkdir -p ${folder} && cat > ${folder}/Pulumi.yaml <<'END'\nname: yaml-${name}\nruntime: yaml\n${program}END`);
        // The account from the environment, as a CI job gives it: no stack config to set.
        await machine.ok("pulumi stack init dev", folder);
        return [name, await machine.run(`GPU_RENTAL_API_URL=${URL} GPU_RENTAL_API_KEY=${KEY} pulumi preview`, folder)] as const;
      }),
    );
    for (const [name, run] of previews) expect({ name, ...run }).toEqual({ name, code: 1, output: expect.stringMatching(MISTAKES[name].fails) });
    expect(await holdings()).toEqual(before);
  }, 300_000);

  it("manages the account in YAML: env vars the worker's onstart sees, a local volume kept across a stop, a team, a webhook whose receiver gets a signed outbid, a bid raised in place, imports, no secret in plaintext, destroy", async () => {
    const program: AccountProgram = {
      files: { "Pulumi.yaml": ACCOUNT_PROGRAM },
      names: { receiverUrl: "receiverUrl", hfToken: "hfToken", childPassword: "childPassword", bid: "bid", workerId: "workerId", webhookSecret: "webhookSecret" },
      importedFile: "imported.yaml",
      // The printed resources, without their own `resources:` line, under the program's (as the page's adoption does).
      spliceImported: "sed 1d imported.yaml | sed -i '/^resources:/r /dev/stdin' Pulumi.yaml",
    };
    await checkAccountAsCode(machine, URL, "yaml", program);
  }, 600_000);
});
