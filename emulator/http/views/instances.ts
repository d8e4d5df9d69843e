import { FieldType } from "../../../sdk/schemas";
import { registryLogin } from "../../domain/docker-flags";
import { actualStatus, containerEnv, diskOf, Lifecycle } from "../../domain/instances";
import { costsOf } from "../../domain/catalogue";
import { storagePerHour } from "../../domain/offers";
import type { InstanceRecord } from "../../domain/records";

/** Fields of the instance listing's `select_filters` and `order_by` (`GET /api/v1/instances/`). */
export const INSTANCE_FIELDS: Record<string, FieldType> = {
  id: "number", machine_id: "number", host_id: "number", num_gpus: "number", gpu_ram: "number", cpu_cores: "number",
  cpu_ram: "number", dph_total: "number", dph_base: "number", min_bid: "number", start_date: "number",
  disk_space: "number", ssh_port: "number", direct_port_start: "number", direct_port_end: "number",
  reliability2: "number", storage_cost: "number",
  actual_status: "string", intended_status: "string", cur_state: "string", next_state: "string", label: "string",
  gpu_name: "string", image_uuid: "string", template_hash_id: "string", ssh_host: "string", public_ipaddr: "string",
  status_msg: "string", image_runtype: "string", verification: "string",
  is_bid: "boolean", vm: "boolean", geolocation: "location",
};

/**
 * Fields the listing computes rather than stores: the live v1 listing refuses a `select_filters` on them with 400
 * (docs/service-facts.md#the-v1-instance-listing), though its rows show them.
 */
export const COMPUTED_INSTANCE_FIELDS: readonly string[] = ["dph_total", "num_gpus"];

/** The instance as the listing (`GET /api/v1/instances/`) and `GET /api/v0/instances/{id}/` show it. */
export function instanceView(instance: InstanceRecord, now: number, lifecycle: Lifecycle): Record<string, unknown> {
  const { offer, config } = instance;
  const status = actualStatus(instance, now, lifecycle);
  const sshPort = instance.ports["22/tcp"]?.[0]?.HostPort;
  const direct = instance.runtype.endsWith("_direct");
  const hasSsh = instance.runtype !== "args";
  // With SSH on, the instance is reached where the emulator serves it, directly or "through the proxy" alike.
  const served = instance.sshEndpoint;
  const login = registryLogin(config.image_login);
  return {
    id: instance.id,
    actual_status: status,
    intended_status: instance.intended,
    cur_state: instance.intended,
    next_state: instance.intended,
    status_msg: instance.statusMsg ?? statusMessage(status),
    label: instance.label,
    ssh_host: hasSsh ? (served?.host ?? (direct ? instance.publicIp : `ssh${(instance.id % 9) + 1}.proxy.gpu-rental.test`)) : null,
    ssh_port: hasSsh ? (served?.port ?? (direct && sshPort ? Number(sshPort) : 20000 + (instance.id % 40000))) : null,
    public_ipaddr: served?.host ?? instance.publicIp,
    direct_port_start: instance.directPortStart,
    direct_port_end: instance.directPortEnd,
    ports: portsShown(instance),
    machine_id: offer.machine_id,
    host_id: offer.host_id,
    num_gpus: offer.num_gpus,
    gpu_name: offer.gpu_name,
    gpu_ram: offer.gpu_ram,
    cpu_cores: offer.cpu_cores,
    cpu_ram: offer.cpu_ram,
    // What the instance costs per hour now: compute (on-demand or the bid) plus its disk.
    dph_total: Number((instance.pricePerHour + storagePerHour(offer, diskOf(instance))).toFixed(6)),
    dph_base: instance.pricePerHour,
    storage_cost: offer.storage_cost,
    is_bid: instance.isBid,
    min_bid: offer.min_bid ?? null,
    image_uuid: config.image ?? null,
    template_hash_id: config.template_hash_id ?? null,
    image_runtype: instance.runtype,
    image_args: config.args ?? [],
    args_str: config.args_str ?? null,
    start_date: instance.createdAt / 1000,
    extra_env: containerEnv(config),
    onstart: config.onstart ?? null,
    jupyter_dir: config.jupyter_dir ?? null,
    use_jupyter_lab: config.use_jupyter_lab ?? false,
    python_utf8: config.python_utf8 ?? false,
    lang_utf8: config.lang_utf8 ?? false,
    docker_login_user: login.user,
    docker_login_repo: login.repo,
    vm: config.vm ?? false,
    volume_info: instance.volume ? { volume_id: instance.volume.id, mount_path: instance.volume.mount_path } : null,
    extra_filters: config.extra_filters ?? null,
    disk_space: diskOf(instance),
    geolocation: offer.geolocation,
    reliability2: offer.reliability2,
    verification: offer.verification ?? null,
    ...machineFields(instance, status, now),
  };
}

/** What an instance shows of its machine, as its offer had it (docs/service-facts.md#records-as-the-vendor-describes-them). */
const FROM_THE_OFFER = [
  "bundle_id", "bw_nvlink", "cpu_arch", "cpu_cores_effective", "cpu_name", "credit_discount_max", "cuda_max_good", "direct_port_count",
  "disk_bw", "disk_name", "dlperf", "dlperf_per_dphtotal", "driver_version", "duration", "end_date", "external", "flops_per_dphtotal",
  "gpu_arch", "gpu_frac", "gpu_lanes", "gpu_mem_bw", "hosting_type", "inet_down", "inet_up", "logo", "mobo_name", "os_version", "pci_gen",
  "pcie_bw", "score", "static_ip", "total_flops", "vram_costperhour", "webpage", "time_remaining", "time_remaining_isbid",
] as const;

/**
 * The fields of an instance beyond its contract: its machine's (from its offer), its costs for its own disk, and what
 * the live service measures on a machine (load, temperature, memory), which the emulator does not: null where the
 * vendor's description allows it, else the value its example shows when nothing was measured (0, -1).
 */
function machineFields(instance: InstanceRecord, status: string | null, now: number): Record<string, unknown> {
  const { offer } = instance;
  // Filled in place: a listing makes this for every row, and copies of copies (entries, spreads) made it slow.
  const fields: Record<string, unknown> = {};
  for (const field of FROM_THE_OFFER) fields[field] = offer[field] ?? null;
  const diskHour = storagePerHour(offer, diskOf(instance));
  const hours = (since: number) => Number(((now - since) / 3_600_000).toFixed(4));
  return Object.assign(fields, costsOf(instance.pricePerHour, Number((instance.pricePerHour + diskHour).toFixed(6)), diskHour), {
    gpu_totalram: offer.gpu_total_ram ?? null,
    country_code: typeof offer.geolocation === "string" ? (offer.geolocation.split(", ").pop() ?? null) : null,
    rentable: false,
    client_run_time: hours(instance.createdAt),
    host_run_time: typeof offer.start_date === "number" ? hours(offer.start_date * 1000) : null,
    uptime_mins: status === "running" ? Math.floor((now - instance.bootStartedAt) / 60_000) : null,
    ssh_idx: String((instance.id % 9) + 1),
    machine_dir_ssh_port: instance.directPortStart,
    local_ipaddrs: `10.0.${(offer.machine_id ?? 0) % 256}.${(instance.id % 253) + 2} 172.17.0.1 \n`,
    jupyter_token: "",
    template_id: null,
    template_name: null,
    credit_balance: null,
    credit_discount: null,
    cpu_util: 0,
    gpu_util: null,
    gpu_temp: null,
    mem_usage: null,
    mem_limit: null,
    vmem_usage: null,
    disk_usage: -1,
    disk_util: -1,
  });
}

/**
 * The record's ports, with the ports the emulator really serves in their place: SSH's where it serves SSH, and each
 * port published by a machine that is up (emulator/sandbox/network.ts).
 */
function portsShown(instance: InstanceRecord): InstanceRecord["ports"] {
  const served = instance.sshEndpoint;
  const host = served?.host ?? "127.0.0.1";
  const ports = { ...instance.ports };
  if (served && ports["22/tcp"]) ports["22/tcp"] = [{ HostIp: served.host, HostPort: String(served.port) }];
  for (const [port, hostPort] of Object.entries(instance.publishedPorts ?? {})) ports[port] = [{ HostIp: host, HostPort: String(hostPort) }];
  return ports;
}

function statusMessage(status: string | null): string {
  switch (status) {
    case null:
      return "Provisioning";
    case "loading":
      return "Pulling image and booting";
    case "running":
      return "success, running";
    default:
      return status;
  }
}
