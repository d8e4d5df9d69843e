import { CreateInstanceRequest, Offer, Runtype } from "../../sdk/schemas";
import { plainMountPath, portFlag, registryLogin, volumeFlag } from "./docker-flags";
import { badRequest, notFound, ServiceError } from "./errors";
import { contractPrice, storagePerHour } from "./offers";
import { Persistent } from "./persistence";
import { applyTemplate } from "./templates";
import type { FailureStatus, InstanceRecord, TemplateRecord, VolumeMount, VolumeRecord } from "./records";

export interface Lifecycle {
  /** `null` status: provisioning. */
  provisioningMs: number;
  /** `loading`: the image downloads and boots. */
  loadingMs: number;
  /** `rebooting` or `recycling`: the container stops (and, recycled, is made anew) before it boots again. Default 3 s. */
  restartMs?: number;
}

export const DEFAULT_RESTART_MS = 3_000;

/** Why an instance whose bid is below its offer's minimum is stopped. */
function belowMinimum(bid: number, offer: Offer): string {
  return `Outbid: the bid of ${bid} $/hour is below the minimum of ${offer.min_bid} $/hour; the instance is stopped.`;
}

/**
 * What runs an instance's machine (emulator/sandbox/machines.ts): told of every instance created, looked at and
 * removed, so it can start and stop the instance's processes as its lifecycle says.
 */
export interface InstanceWatcher {
  created(instance: InstanceRecord, instanceApiKey: string): void;
  observe(instance: InstanceRecord): void;
  removed(instance: InstanceRecord): void;
}

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
  const status = scheduledStatus(instance, now, lifecycle);
  // The clock says booted, but the emulated machine of this boot is not up yet (onstart, SSH).
  return status === "running" && instance.bootPending === instance.bootStartedAt ? "loading" : status;
}

/** The status the lifecycle's durations alone give at `now`, whatever the emulated machine is doing. */
export function scheduledStatus(instance: InstanceRecord, now: number, lifecycle: Lifecycle): string | null {
  if (instance.failure) return instance.failure;
  if (instance.intended === "stopped") return "exited";
  const elapsed = now - instance.bootStartedAt;
  if (instance.restarting && elapsed < 0) return instance.restarting;
  const provisioning = instance.restarted ? 0 : lifecycle.provisioningMs;
  if (elapsed < provisioning) return null;
  if (elapsed < provisioning + lifecycle.loadingMs || instance.neverBoots) return "loading";
  return "running";
}

/**
 * The environment of the container: `env` without its docker options (port mappings `-p`, and the `-h`, `-v`,
 * `-n` options the public Python client also puts there), plus the locale switches.
 */
export function containerEnv(config: CreateInstanceRequest): [string, string][] {
  const env: [string, string][] = Object.entries(config.env ?? {})
    .filter(([key]) => !key.startsWith("-"))
    .map(([key, value]) => [key, String(value)]);
  if (config.lang_utf8) env.push(["LANG", "C.UTF-8"], ["LC_ALL", "C.UTF-8"]);
  if (config.python_utf8) env.push(["PYTHONIOENCODING", "utf-8"], ["PYTHONUTF8", "1"]);
  return env;
}

/**
 * The config as it is kept: `image_login` without its token (`-u <user> <registry>`). The emulator never logs
 * in to a registry, so a secret kept at rest (and in every `--data-dir` save) would serve no one.
 */
function withoutRegistryToken(config: CreateInstanceRequest): CreateInstanceRequest {
  if (config.image_login === undefined) return config;
  const { user, repo } = registryLogin(config.image_login);
  const { image_login: _token, ...rest } = config;
  const login = [user && `-u ${user}`, repo].filter(Boolean).join(" ");
  return login ? { ...rest, image_login: login } : rest;
}

/** The volumes of `-v V.<id>:<path>` keys of an instance's `env`; a path with `.` or `..` segments is refused. */
export function volumeMounts(env: Record<string, unknown> | undefined): VolumeMount[] {
  const mounts = Object.keys(env ?? {}).flatMap((key) => volumeFlag(key) ?? []);
  const crooked = mounts.find((mount) => !plainMountPath(mount.path));
  if (crooked) throw badRequest("invalid_args", `env: the mount path ${JSON.stringify(crooked.path)} of volume ${crooked.volumeId} has a . or .. segment: give the path itself, e.g. /data.`);
  return mounts;
}

/** Port mappings: the runtype's ports plus `-p host:container` keys of `env`. */
export function portMappings(
  runtype: Runtype,
  env: Record<string, unknown> | undefined,
  firstHostPort: number,
): Record<string, { HostIp: string; HostPort: string }[]> {
  const containerPorts = new Set(RUNTYPE_PORTS[runtype].map((port) => `${port}/tcp`));
  for (const key of Object.keys(env ?? {})) {
    const mapped = portFlag(key);
    if (mapped) containerPorts.add(mapped);
  }
  const ports: Record<string, { HostIp: string; HostPort: string }[]> = {};
  let hostPort = firstHostPort;
  // The service picks the host ports from the machine's direct range; the host part of `-p` is a wish only.
  for (const port of [...containerPorts].sort((a, b) => parseInt(a) - parseInt(b))) {
    ports[port] = [{ HostIp: "0.0.0.0", HostPort: String(hostPort++) }];
  }
  return ports;
}

const DEFAULT_DISK_GB = 8;
export const diskOf = (instance: InstanceRecord) => instance.config.disk ?? DEFAULT_DISK_GB;

/** Charges the owner for the time since the last charge: compute while running, disk always. */
export function accrue(instance: InstanceRecord, now: number): number {
  const next = instance.nextPrice;
  if (next && now >= next.from) {
    // An accepted price increase: the old price up to the contract's end, the new one after.
    const before = next.from > instance.billedUntil ? accrue({ ...instance, nextPrice: undefined }, next.from) : 0;
    instance.billedUntil = Math.max(instance.billedUntil, next.from);
    instance.pricePerHour = next.pricePerHour;
    instance.nextPrice = undefined;
    return before + accrue(instance, now);
  }
  const hours = Math.max(0, now - instance.billedUntil) / MS_PER_HOUR;
  const computeHours = Math.max(0, now - Math.max(instance.billedUntil, instance.computeFrom ?? 0)) / MS_PER_HOUR;
  instance.billedUntil = Math.max(now, instance.billedUntil);
  const storage = storagePerHour(instance.offer, diskOf(instance));
  const computing = instance.intended === "running" && !instance.failure;
  return hours * storage + (computing ? computeHours * instance.pricePerHour : 0);
}

/** What an owner is told of (emulator/domain/webhooks.ts). */
export type InstanceEvent = "outbid" | "started" | "stopped" | "deleted";

export interface InstanceDeps {
  now: () => number;
  lifecycle: () => Lifecycle;
  /** Takes the offer off the market, or throws `no_such_ask`. */
  takeOffer: (offerId: number, instanceId: number) => Offer;
  /** The offer, rented or not (a second acceptance names one that another acceptance holds). */
  findOffer: (offerId: number) => Offer | undefined;
  releaseOffer: (offerId: number) => void;
  /** Issues the instance API key; returns its id and value. */
  issueInstanceKey: (ownerId: number, instanceId: number) => { id: number; key: string };
  revokeKey: (keyId: number) => void;
  /** Charges the owner for the instance over a period (ms since the epoch). */
  charge: (ownerId: number, instanceId: number, amount: number, period: { from: number; to: number }) => void;
  /** The instance is destroyed, charged for the last time (its record: what is left of its deposit goes back). */
  ended: (instanceId: number, instance: InstanceRecord) => void;
  /** Something happened to it that its owner may be told of (a webhook event). */
  notify?: (instance: InstanceRecord, event: InstanceEvent) => void;
  pick: (min: number, max: number) => number;
  /** The template a `template_hash_id` names (or `no_such_template`), and counting its use. */
  templates: { resolve(ownerId: number, hashId: string): TemplateRecord; recordUse(template: TemplateRecord): void };
  /** The account's environment variables (emulator/domain/env-vars.ts), which an instance gets when it is created. */
  accountEnv: (ownerId: number) => Record<string, string>;
  /** Links or creates the volume of `volume_info`, and frees an instance's volumes when it is destroyed. */
  volumes: {
    attach(ownerId: number, info: NonNullable<CreateInstanceRequest["volume_info"]>, offer: Offer, instanceId: number): VolumeRecord;
    detach(instanceId: number): void;
  };
  /** The minimum bid of an offer's machine now, which other tenants may hold up (./outbids.ts). Default the offer's own. */
  minBid?: (offerId: number) => number | null | undefined;
}

export interface InstancesSnapshot {
  records: InstanceRecord[];
  nextId: number;
}

/** Every rented instance, and the rules of their lifecycle. */
export class Instances implements Persistent<InstancesSnapshot> {
  private records = new Map<number, InstanceRecord>();
  private nextId = 4_000_001;
  private watcher?: InstanceWatcher;

  constructor(private readonly deps: InstanceDeps) {}

  /** Lets a machine runner follow every instance's lifecycle (emulator/ssh/: SSH and onstart). */
  watch(watcher: InstanceWatcher | undefined): void {
    this.watcher = watcher;
  }

  /**
   * Accepts an offer: the instance starts provisioning at once (or is created stopped). Every refusal that
   * does not depend on the offer comes first, so a bad request never takes an offer off the market. A bid below
   * the offer's minimum still makes the instance, stopped (outbid), with the refusal to answer (`refusal`, naming
   * it in `new_contract`). A `secondAcceptance` does not take the offer (another acceptance holds it) and never boots.
   */
  create(
    ownerId: number,
    offerId: number,
    request: CreateInstanceRequest,
    options: { secondAcceptance?: boolean } = {},
  ): { instance: InstanceRecord; apiKey: string; refusal?: ServiceError } {
    const template = request.template_hash_id ? this.deps.templates.resolve(ownerId, request.template_hash_id) : undefined;
    const config = withoutRegistryToken(template ? applyTemplate(template, request) : request);
    // Without a runtype an instance is an SSH one, unless it is given arguments (docs/service-facts.md#records-as-the-vendor-describes-them).
    const runtype = config.runtype ?? (config.args_str !== undefined || config.args !== undefined ? "args" : "ssh");
    if (config.args_str !== undefined && runtype !== "args") {
      throw badRequest("invalid_args", `args_str is only used with runtype args (this request's runtype is ${runtype}): drop args_str, or use runtype args.`);
    }
    const id = this.nextId;
    const offer = options.secondAcceptance ? this.offerAccepted(offerId) : this.deps.takeOffer(offerId, id);
    let price: ReturnType<typeof contractPrice>;
    let volume: VolumeRecord | undefined;
    const mounts: VolumeMount[] = [];
    try {
      price = contractPrice(offer, config.price);
      for (const mount of volumeMounts(config.env)) {
        this.deps.volumes.attach(ownerId, { create_new: false, volume_id: mount.volumeId, mount_path: mount.path }, offer, id);
        mounts.push(mount);
      }
      // Last, as it may create a volume: nothing after it can refuse the instance.
      if (config.volume_info) {
        volume = this.deps.volumes.attach(ownerId, config.volume_info, offer, id);
        mounts.push({ volumeId: volume.id, path: config.volume_info.mount_path });
      }
    } catch (error) {
      // Nothing half-made: the volumes linked before the refusal are free again, and so is the offer.
      this.deps.volumes.detach(id);
      if (!options.secondAcceptance) this.deps.releaseOffer(offerId);
      throw error;
    }
    this.nextId++;
    if (template) this.deps.templates.recordUse(template);
    const now = this.deps.now();
    const directPortStart = this.deps.pick(20000, 60000);
    const accountEnv = { ...this.deps.accountEnv(ownerId) };
    const instance: InstanceRecord = {
      id,
      ownerId,
      offer,
      config,
      ...(Object.keys(accountEnv).length && { accountEnv }),
      runtype,
      isBid: price.isBid,
      pricePerHour: price.pricePerHour,
      createdAt: now,
      bootStartedAt: now,
      restarted: false,
      intended: price.belowMinimum ? "stopped" : (config.target_state ?? "running"),
      ...(price.belowMinimum && { statusMsg: belowMinimum(price.pricePerHour, offer), stoppedByBid: true as const }),
      ...(options.secondAcceptance && { neverBoots: true as const }),
      label: config.label ?? "",
      ports: portMappings(runtype, config.env, directPortStart),
      publicIp: `203.0.113.${(offer.machine_id ?? id) % 250 + 1}`,
      directPortStart,
      directPortEnd: directPortStart + Math.max(0, (offer.direct_port_count ?? 1) - 1),
      billedUntil: now,
      volume: volume && config.volume_info ? { id: volume.id, mount_path: config.volume_info.mount_path } : undefined,
      ...(mounts.length && { mounts }),
    };
    const key = this.deps.issueInstanceKey(ownerId, id);
    instance.instanceKeyId = key.id;
    this.records.set(id, instance);
    this.watcher?.created(instance, key.key);
    if (!price.belowMinimum) return { instance, apiKey: key.key };
    const refusal = badRequest(
      "invalid_price",
      `Bid ${price.pricePerHour} $/hour is below the offer's minimum bid of ${offer.min_bid} $/hour: bid at least that. ` +
        `Instance ${id} was created stopped (outbid) and bills storage until destroyed.`,
      { new_contract: id },
    );
    return { instance, apiKey: key.key, refusal };
  }

  /** The offer a second acceptance names: one that exists, rented or not. */
  private offerAccepted(offerId: number): Offer {
    const offer = this.deps.findOffer(offerId);
    if (!offer) throw notFound("no_such_ask", `Offer ${offerId} does not exist or is no longer available. Search the offers again and pick another.`);
    return offer;
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

  /**
   * Start, stop, relabel. A start boots again from `loading` (an outbid instance too: the emulator does not
   * model how long the higher bid lasts); a failed instance cannot be started.
   */
  update(instance: InstanceRecord, change: { state?: "running" | "stopped"; label?: string }): void {
    this.settleOne(instance);
    if (change.label !== undefined) instance.label = change.label;
    if (change.state === "stopped" && instance.intended !== "stopped") {
      instance.intended = "stopped";
      this.deps.notify?.(instance, "stopped");
    }
    if (change.state === "running" && instance.intended !== "running") {
      if (instance.failure) {
        throw badRequest("invalid_args", `Instance ${instance.id} is ${instance.failure}; it cannot be started. Destroy it and create another.`);
      }
      this.boot(instance);
      this.deps.notify?.(instance, "started");
    }
    this.watcher?.observe(instance);
  }

  /**
   * A new bid for an interruptible instance (`null`: the offer's minimum, the winning bid). What ran so far is
   * charged at the old bid. A bid below the minimum stops a running instance (outbid); a higher bid, at least the
   * minimum, boots again one that its bid had stopped.
   */
  changeBid(instance: InstanceRecord, price: number | null): void {
    if (!instance.isBid) throw badRequest("invalid_args", `Instance ${instance.id} is on-demand: it has no bid to change.`);
    const minimum = this.deps.minBid?.(instance.offer.id) ?? instance.offer.min_bid ?? 0;
    const bid = price ?? minimum;
    if (!(bid >= 0.001)) throw badRequest("invalid_args", "Please set a bid price >= 0.001.");
    this.settleOne(instance);
    const raised = bid > instance.pricePerHour;
    instance.pricePerHour = bid;
    if (bid < minimum) {
      if (instance.intended === "running") {
        Object.assign(instance, { intended: "stopped", statusMsg: belowMinimum(bid, instance.offer), stoppedByBid: true });
        this.deps.notify?.(instance, "outbid");
      }
    } else if (instance.stoppedByBid && raised && !instance.failure) {
      this.boot(instance);
    }
    this.watcher?.observe(instance);
  }

  /**
   * A reboot (the container stopped and started: its files kept) or a recycle (the container made anew from its
   * image: its files gone): `rebooting` or `recycling` for the lifecycle's `restartMs`, then a boot from
   * `loading`, onstart again. Billed throughout, as the instance keeps its GPUs. Only a running instance.
   */
  restart(instance: InstanceRecord, how: "rebooting" | "recycling"): void {
    if (instance.failure || instance.intended !== "running") {
      const state = instance.failure ?? "stopped";
      throw badRequest("invalid_args", `Instance ${instance.id} is ${state}: only a running instance can be ${how === "rebooting" ? "rebooted" : "recycled"}.`);
    }
    this.settleOne(instance);
    this.boot(instance, this.deps.now() + (this.deps.lifecycle().restartMs ?? DEFAULT_RESTART_MS));
    instance.restarting = how;
    instance.freshBoot = how === "recycling" ? instance.bootStartedAt : instance.freshBoot;
    this.watcher?.observe(instance);
  }

  /** Boots a stopped instance again, from `loading` (at `at`: after a restart's own status). */
  private boot(instance: InstanceRecord, at = this.deps.now()): void {
    instance.intended = "running";
    instance.bootStartedAt = at;
    instance.restarted = true;
    instance.restarting = undefined;
    instance.statusMsg = undefined;
    instance.stoppedByBid = undefined;
  }

  /** Destroys at once: gone from listings, billing stopped, the offer back on the market, its key revoked. */
  destroy(instance: InstanceRecord): void {
    this.settleOne(instance);
    this.records.delete(instance.id);
    this.deps.ended(instance.id, instance);
    this.deps.notify?.(instance, "deleted");
    // A second acceptance never held the offer: the acceptance that does keeps it.
    if (!instance.neverBoots) this.deps.releaseOffer(instance.offer.id);
    this.deps.volumes.detach(instance.id);
    if (instance.instanceKeyId !== undefined) this.deps.revokeKey(instance.instanceKeyId);
    this.watcher?.removed(instance);
  }

  /** Forces a failure status (an emulator control): the instance never reaches `running` again. */
  fail(id: number, status: FailureStatus, message?: string): InstanceRecord | undefined {
    const instance = this.records.get(id);
    if (!instance) return undefined;
    this.settleOne(instance);
    instance.failure = status;
    instance.statusMsg = message;
    this.watcher?.observe(instance);
    return instance;
  }

  /**
   * Another client outbids an interruptible instance (an emulator control): it is stopped, and compute billing
   * halts. An on-demand instance cannot be outbid.
   */
  outbid(id: number, at = this.deps.now()): InstanceRecord | undefined {
    const instance = this.records.get(id);
    if (!instance) return undefined;
    if (!instance.isBid) {
      throw badRequest("not_a_bid", `Instance ${id} is on-demand: only interruptible (bid) instances can be outbid.`);
    }
    // Charged up to the moment it was outbid (an outbid of the emulator's own, due between two looks at the clock).
    this.settleOne(instance, at);
    instance.intended = "stopped";
    instance.statusMsg = "Outbid: another client bid higher for this machine; the instance is stopped.";
    instance.stoppedByBid = true;
    this.watcher?.observe(instance);
    this.deps.notify?.(instance, "outbid");
    return instance;
  }

  all(): InstanceRecord[] {
    return [...this.records.values()];
  }

  /** The instance of that id, whoever owns it (the emulator's own lookups: the autoscaler, the machines). */
  byId(id: number): InstanceRecord | undefined {
    return this.records.get(id);
  }

  /** Charges every instance's owner up to now. */
  settle(): void {
    for (const instance of this.records.values()) this.settleOne(instance);
  }

  snapshot(): InstancesSnapshot {
    return structuredClone({ records: [...this.records.values()], nextId: this.nextId });
  }

  /**
   * Records saved before the token was dropped are cleaned on the way in (and so on the next save). What a
   * running machine held (its SSH endpoint, a boot in progress) ended with the process that saved it.
   */
  restore(data: InstancesSnapshot): void {
    const records = structuredClone(data.records).map((record) => {
      const { request: _request, outbid: _outbid, sshEndpoint: _endpoint, publishedPorts: _published, bootPending: _boot, ...kept } = record as InstanceRecord & { request?: unknown; outbid?: unknown };
      return { ...kept, config: withoutRegistryToken(kept.config) };
    });
    this.records = new Map(records.map((record) => [record.id, record]));
    this.nextId = data.nextId;
  }

  /** Charges up to now, and lets the machine runner catch up with the clock (a boot that is due starts). */
  private settleOne(instance: InstanceRecord, at = this.deps.now()): void {
    const from = instance.billedUntil;
    const amount = accrue(instance, at);
    if (amount > 0) this.deps.charge(instance.ownerId, instance.id, amount, { from, to: instance.billedUntil });
    this.watcher?.observe(instance);
  }
}
