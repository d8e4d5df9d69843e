import { CreateInstanceRequest, Offer, Runtype } from "../../sdk/schemas";
import { badRequest } from "./errors";

export interface Lifecycle {
  /** `null` status: provisioning. */
  provisioningMs: number;
  /** `loading`: the image downloads and boots. */
  loadingMs: number;
}

export type FailureStatus = "exited" | "unknown" | "offline";

export interface InstanceRecord {
  id: number;
  ownerId: number;
  offer: Offer;
  request: CreateInstanceRequest;
  runtype: Runtype;
  isBid: boolean;
  pricePerHour: number;
  createdAt: number;
  /** When the current boot started; provisioning is skipped when an instance is restarted. */
  bootStartedAt: number;
  restarted: boolean;
  intended: "running" | "stopped";
  failure?: FailureStatus;
  statusMsg?: string;
  label: string;
  ports: Record<string, { HostIp: string; HostPort: string }[]>;
  publicIp: string;
  directPortStart: number;
  directPortEnd: number;
  instanceKeyId?: number;
  /** Billing has been charged up to this time. */
  billedUntil: number;
}

const HOURS_PER_MONTH = 730;
const MS_PER_HOUR = 3_600_000;

/** Container ports each runtype provisions (the spec's runtype table). */
const RUNTYPE_PORTS: Record<Runtype, number[]> = {
  ssh_direct: [22],
  jupyter_direct: [8080, 22],
  ssh_proxy: [],
  ssh: [],
  jupyter_proxy: [],
  jupyter: [],
  args: [],
};

/** The lifecycle status of an instance at `now`: `null → loading → running`, or its failure, or stopped. */
export function actualStatus(instance: InstanceRecord, now: number, lifecycle: Lifecycle): string | null {
  if (instance.failure) return instance.failure;
  if (instance.intended === "stopped") return "exited";
  const elapsed = now - instance.bootStartedAt;
  const provisioning = instance.restarted ? 0 : lifecycle.provisioningMs;
  if (elapsed < provisioning) return null;
  if (elapsed < provisioning + lifecycle.loadingMs) return "loading";
  return "running";
}

/** Checks the rules of a creation request against the offer; returns the bid price or the on-demand price. */
export function priceOf(request: CreateInstanceRequest, offer: Offer): { isBid: boolean; pricePerHour: number } {
  if (request.price === undefined) return { isBid: false, pricePerHour: offer.dph_total };
  const minBid = offer.min_bid ?? offer.dph_total;
  if (request.price < minBid) {
    throw badRequest("invalid_price", `Bid ${request.price} $/hour is below the offer's minimum bid of ${minBid} $/hour.`);
  }
  return { isBid: true, pricePerHour: request.price };
}

/** Port mappings: the runtype's ports plus `-p host:container` keys of `env`. */
export function portMappings(
  runtype: Runtype,
  env: Record<string, unknown> | undefined,
  firstHostPort: number,
): Record<string, { HostIp: string; HostPort: string }[]> {
  const containerPorts = new Set(RUNTYPE_PORTS[runtype]);
  for (const key of Object.keys(env ?? {})) {
    const mapped = /^-p\s+(?:\d+:)?(\d+)(?:\/(?:tcp|udp))?$/.exec(key.trim());
    if (mapped) containerPorts.add(Number(mapped[1]));
  }
  const ports: Record<string, { HostIp: string; HostPort: string }[]> = {};
  let hostPort = firstHostPort;
  for (const port of [...containerPorts].sort((a, b) => a - b)) {
    ports[`${port}/tcp`] = [{ HostIp: "0.0.0.0", HostPort: String(hostPort++) }];
  }
  return ports;
}

/** Charges the owner for the time since the last charge: compute while running, disk always. */
export function accrue(instance: InstanceRecord, now: number): number {
  const hours = Math.max(0, now - instance.billedUntil) / MS_PER_HOUR;
  instance.billedUntil = Math.max(now, instance.billedUntil);
  const disk = instance.request.disk ?? 8;
  const storagePerHour = ((instance.offer.storage_cost ?? 0) * disk) / HOURS_PER_MONTH;
  const computing = instance.intended === "running" && !instance.failure;
  return hours * (storagePerHour + (computing ? instance.pricePerHour : 0));
}

/** The instance as `GET /api/v0/instances/` shows it. */
export function instanceView(instance: InstanceRecord, now: number, lifecycle: Lifecycle): Record<string, unknown> {
  const { offer, request } = instance;
  const status = actualStatus(instance, now, lifecycle);
  const sshPort = instance.ports["22/tcp"]?.[0]?.HostPort;
  const direct = instance.runtype.endsWith("_direct");
  const hasSsh = instance.runtype !== "args";
  return {
    id: instance.id,
    actual_status: status,
    intended_status: instance.intended,
    cur_state: instance.intended,
    next_state: instance.intended,
    status_msg: instance.statusMsg ?? statusMessage(status),
    label: instance.label,
    ssh_host: hasSsh ? (direct ? instance.publicIp : `ssh${(instance.id % 9) + 1}.proxy.gpu-rental.test`) : null,
    ssh_port: hasSsh ? (direct && sshPort ? Number(sshPort) : 20000 + (instance.id % 40000)) : null,
    public_ipaddr: instance.publicIp,
    direct_port_start: instance.directPortStart,
    direct_port_end: instance.directPortEnd,
    ports: instance.ports,
    machine_id: offer.machine_id,
    host_id: offer.host_id,
    num_gpus: offer.num_gpus,
    gpu_name: offer.gpu_name,
    gpu_ram: offer.gpu_ram,
    cpu_cores: offer.cpu_cores,
    cpu_ram: offer.cpu_ram,
    dph_total: instance.pricePerHour,
    is_bid: instance.isBid,
    image_uuid: request.image ?? null,
    template_hash_id: request.template_hash_id ?? null,
    image_runtype: instance.runtype,
    start_date: instance.createdAt / 1000,
    extra_env: Object.entries(request.env ?? {}).map(([k, v]) => [k, String(v)]),
    onstart: request.onstart ?? null,
    disk_space: request.disk ?? 8,
    geolocation: offer.geolocation,
    reliability2: offer.reliability2,
  };
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

export interface InstanceDeps {
  now: () => number;
  lifecycle: () => Lifecycle;
  /** Takes the offer off the market, or throws `no_such_ask`. */
  takeOffer: (offerId: number, instanceId: number) => Offer;
  releaseOffer: (offerId: number) => void;
  /** Issues the instance API key; returns its id and value. */
  issueInstanceKey: (ownerId: number, instanceId: number) => { id: number; key: string };
  revokeKey: (keyId: number) => void;
  charge: (ownerId: number, amount: number) => void;
  pick: (min: number, max: number) => number;
}

/** Every rented instance, and the rules of their lifecycle. */
export class Instances {
  private readonly records = new Map<number, InstanceRecord>();
  private nextId = 4_000_001;

  constructor(private readonly deps: InstanceDeps) {}

  /** Accepts an offer: the instance starts provisioning at once (or is created stopped). */
  create(ownerId: number, offerId: number, request: CreateInstanceRequest): { instance: InstanceRecord; apiKey: string } {
    if (request.args_str !== undefined && (request.runtype ?? "args") !== "args") {
      throw badRequest("invalid_args", "args_str is only used with runtype args.");
    }
    const id = this.nextId;
    const offer = this.deps.takeOffer(offerId, id);
    this.nextId++;
    let price: { isBid: boolean; pricePerHour: number };
    try {
      price = priceOf(request, offer);
    } catch (error) {
      this.deps.releaseOffer(offerId);
      throw error;
    }
    const now = this.deps.now();
    const runtype = request.runtype ?? "args";
    const directPortStart = this.deps.pick(20000, 60000);
    const instance: InstanceRecord = {
      id,
      ownerId,
      offer,
      request,
      runtype,
      ...price,
      createdAt: now,
      bootStartedAt: now,
      restarted: false,
      intended: request.target_state ?? "running",
      label: request.label ?? "",
      ports: portMappings(runtype, request.env, directPortStart),
      publicIp: `203.0.113.${(offer.machine_id ?? id) % 250 + 1}`,
      directPortStart,
      directPortEnd: directPortStart + Math.max(0, (offer.direct_port_count ?? 1) - 1),
      billedUntil: now,
    };
    const key = this.deps.issueInstanceKey(ownerId, id);
    instance.instanceKeyId = key.id;
    this.records.set(id, instance);
    return { instance, apiKey: key.key };
  }

  list(ownerId: number): InstanceRecord[] {
    this.settle();
    return [...this.records.values()].filter((i) => i.ownerId === ownerId);
  }

  /** The instance if it exists and belongs to `ownerId`. */
  find(ownerId: number, id: number): InstanceRecord | undefined {
    const instance = this.records.get(id);
    if (!instance || instance.ownerId !== ownerId) return undefined;
    this.settleOne(instance);
    return instance;
  }

  /** Start, stop, relabel. A start boots again from `loading`; a failed instance cannot be started. */
  update(instance: InstanceRecord, change: { state?: "running" | "stopped"; label?: string }): void {
    this.settleOne(instance);
    if (change.label !== undefined) instance.label = change.label;
    if (change.state === "stopped") instance.intended = "stopped";
    if (change.state === "running" && instance.intended !== "running") {
      if (instance.failure) {
        throw badRequest("invalid_args", `Instance ${instance.id} is ${instance.failure}; it cannot be started. Destroy it.`);
      }
      instance.intended = "running";
      instance.bootStartedAt = this.deps.now();
      instance.restarted = true;
    }
  }

  /** Destroys at once: gone from listings, billing stopped, the offer back on the market, its key revoked. */
  destroy(instance: InstanceRecord): void {
    this.settleOne(instance);
    this.records.delete(instance.id);
    this.deps.releaseOffer(instance.offer.id);
    if (instance.instanceKeyId !== undefined) this.deps.revokeKey(instance.instanceKeyId);
  }

  /** Forces a failure status (an emulator control): the instance never reaches `running` again. */
  fail(id: number, status: FailureStatus, message?: string): InstanceRecord | undefined {
    const instance = this.records.get(id);
    if (!instance) return undefined;
    this.settleOne(instance);
    instance.failure = status;
    instance.statusMsg = message;
    return instance;
  }

  all(): InstanceRecord[] {
    return [...this.records.values()];
  }

  /** Charges every instance's owner up to now. */
  settle(): void {
    for (const instance of this.records.values()) this.settleOne(instance);
  }

  private settleOne(instance: InstanceRecord): void {
    const amount = accrue(instance, this.deps.now());
    if (amount > 0) this.deps.charge(instance.ownerId, amount);
  }
}
