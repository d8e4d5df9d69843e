import { Offer, VolumeInfo, VolumeListType, VolumeQuery } from "../../sdk/schemas";
import { NetworkVolumeOffer } from "./catalogue";
import type { UserRecord, VolumeRecord } from "./records";
import { badRequest, forbidden, notFound } from "./errors";
import { hourlyStorage } from "./offers";
import { atLeast, DEFAULT_LIMIT, FieldType, MAX_LIMIT, search } from "./filters";
import { Persistent } from "./persistence";

/** Fields a volume offer search (`q`) can filter or order on; `disk_bw` and `duration` are derived, see below. */
export const VOLUME_OFFER_FIELDS: Record<string, FieldType> = {
  id: "number", ask_contract_id: "number", disk_space: "number", inet_up: "number", inet_down: "number",
  reliability: "number", reliability2: "number", nw_disk_avg_bw: "number", nw_disk_max_bw: "number",
  nw_disk_min_bw: "number", start_date: "number", end_date: "number", storage_cost: "number",
  storage_cost_total: "number", score: "number", disk_bw: "number", duration: "number", machine_id: "number",
  verified: "boolean", geolocation: "location",
};

/**
 * Network volumes are not generally released on the live service: an account without the feature is refused on
 * their endpoints (403, in the vendor's words). Every account has it here unless the control API takes it away
 * (`PUT /_emulator/users/{id}` `{"network_volumes": false}`).
 */
export function requireNetworkVolumes(user: UserRecord): void {
  if (user.networkVolumes === false) {
    throw forbidden("not_authorized", "Authorization Error. Check that you have proper privileges to perform this action.");
  }
}

export interface VolumeDeps {
  now: () => number;
  /** The instance offers on the market: each machine's disk is a local volume offer. */
  localOffers: () => Offer[];
  /** Charges a volume's owner for its storage over `period` (the billing ledger keeps it under the volume's id). */
  charge: (ownerId: number, volumeId: number, amount: number, period: { from: number; to: number }) => void;
  /** The volume is deleted: it will be charged no more. */
  ended: (volumeId: number) => void;
}

export interface VolumesSnapshot {
  offers: NetworkVolumeOffer[];
  volumes: VolumeRecord[];
  nextId: number;
}

/** Network and local volumes: their offers, the volumes users hold, and attachment to instances. */
export class Volumes implements Persistent<VolumesSnapshot> {
  private offers = new Map<number, NetworkVolumeOffer>();
  private volumes = new Map<number, VolumeRecord>();
  private nextId = 800_001;

  constructor(
    networkOffers: NetworkVolumeOffer[],
    private readonly deps: VolumeDeps,
  ) {
    for (const offer of networkOffers) this.offers.set(offer.ask_contract_id, offer);
  }

  /** `POST /api/v0/network_volumes/search/`: network volume offers with space left. */
  searchNetworkOffers(q: VolumeQuery): NetworkVolumeOffer[] {
    const candidates = [...this.offers.values()].filter((o) => o.disk_space > 0).map(searchedNetworkOffer);
    return runVolumeSearch(candidates, q);
  }

  /** `POST /api/v0/volumes/search/`: the disks of the machines on the market, as local volume offers. */
  searchLocalOffers(q: VolumeQuery): NetworkVolumeOffer[] {
    return runVolumeSearch(this.deps.localOffers().map((offer) => searchedLocalOffer(offer, q.allocated_storage ?? 1)), q);
  }

  /** `PUT /api/v0/network_volumes/`: takes `size` GB of a network volume offer's space. */
  createNetwork(ownerId: number, offerId: number, size: number, name?: string): VolumeRecord {
    const offer = this.offers.get(offerId);
    if (!offer) {
      throw notFound("no_such_ask", `Network volume offer ${offerId} does not exist. Search network volume offers for an id.`);
    }
    if (size > offer.disk_space) {
      throw badRequest("invalid_size", `Network volume offer ${offerId} has ${offer.disk_space} GB left; ask for at most that, or pick another offer.`);
    }
    offer.disk_space -= size;
    return this.insert({ ownerId, type: "network_volume", name, size, askId: offerId, machineId: null, geolocation: offer.geolocation, storageCost: offer.storage_cost });
  }

  /**
   * `PUT /api/v0/volumes/`: rents `size` GB of a machine's disk as a local volume, from a local volume offer (the
   * id of an instance offer on the market). The volume is on that machine: only an instance of an offer of the
   * same machine can link it. The offer stays on the market.
   */
  createLocal(ownerId: number, offerId: number, size: number, name?: string): VolumeRecord {
    const offer = this.deps.localOffers().find((o) => o.id === offerId);
    if (!offer) {
      throw notFound("no_such_ask", `Local volume offer ${offerId} does not exist or its machine is rented. Search volume offers for an id.`);
    }
    return this.createOnMachine(ownerId, offer, size, name);
  }

  list(ownerId: number, type: VolumeListType = "all_volume"): VolumeRecord[] {
    this.settle();
    return [...this.volumes.values()].filter((v) => v.ownerId === ownerId && (type === "all_volume" || v.type === type));
  }

  /** `DELETE /api/v0/volumes/?id=`: a volume still attached to an instance (running or stopped) stays. */
  remove(ownerId: number, id: number): void {
    const volume = this.owned(ownerId, id, notFound);
    if (volume.instances.length) {
      throw badRequest("volume_in_use", `Volume ${id} is attached to instance ${volume.instances.join(", ")}: destroy the instance first.`);
    }
    this.settleOne(volume);
    const offer = this.offers.get(volume.askId);
    if (volume.type === "network_volume" && offer) offer.disk_space += volume.size;
    this.volumes.delete(id);
    this.deps.ended(id);
    this.removed?.(id);
  }

  /** Told of each deleted volume (the emulated machines drop its files). */
  removed?: (volumeId: number) => void;

  /** Charges every volume's storage up to now: `storage_cost` $/GB/month over its size, whether attached or not. */
  settle(): void {
    for (const volume of this.volumes.values()) this.settleOne(volume);
  }

  private settleOne(volume: VolumeRecord): void {
    const from = volume.billedUntil ?? volume.createdAt;
    const to = this.deps.now();
    if (to <= from) return;
    volume.billedUntil = to;
    const amount = (hourlyStorage(volume.storageCost, volume.size) * (to - from)) / 3_600_000;
    if (amount > 0) this.deps.charge(volume.ownerId, volume.id, amount, { from, to });
  }

  /**
   * `volume_info` of a new instance on `offer`: links an existing volume of the caller's (a local one only on
   * its own machine, and only to one instance), or creates one from a volume offer: a network volume offer, or
   * the instance's own offer for a local volume on its machine.
   */
  attach(ownerId: number, info: VolumeInfo, offer: Offer, instanceId: number): VolumeRecord {
    const volume = info.create_new ? this.createFor(ownerId, info, offer) : this.linkable(ownerId, info.volume_id, offer);
    volume.instances.push(instanceId);
    return volume;
  }

  ids(): number[] {
    return [...this.volumes.keys()];
  }

  /** The instance is gone: its volumes stay, free to link again. */
  detach(instanceId: number): void {
    for (const volume of this.volumes.values()) volume.instances = volume.instances.filter((id) => id !== instanceId);
  }

  snapshot(): VolumesSnapshot {
    return structuredClone({ offers: [...this.offers.values()], volumes: [...this.volumes.values()], nextId: this.nextId });
  }

  restore(data: VolumesSnapshot): void {
    const copy = structuredClone(data);
    this.offers = new Map(copy.offers.map((o) => [o.ask_contract_id, o]));
    this.volumes = new Map(copy.volumes.map((v) => [v.id, v]));
    this.nextId = copy.nextId;
  }

  private createFor(ownerId: number, info: VolumeInfo, offer: Offer): VolumeRecord {
    if (info.size === undefined) {
      throw badRequest("invalid_args", "volume_info.size is required when create_new is true: the new volume's size in GB.");
    }
    if (this.offers.has(info.volume_id)) return this.createNetwork(ownerId, info.volume_id, info.size);
    if (info.volume_id !== offer.id) {
      throw badRequest(
        "no_such_volume_offer",
        `volume_info.volume_id ${info.volume_id} is neither a network volume offer nor this instance's offer ${offer.id}: a local volume is created on the instance's own machine. Search volume offers for an id.`,
      );
    }
    return this.createOnMachine(ownerId, offer, info.size);
  }

  /** A local volume of `size` GB on the machine of `offer`. */
  private createOnMachine(ownerId: number, offer: Offer, size: number, name?: string): VolumeRecord {
    if (size > (offer.disk_space ?? 0)) {
      throw badRequest("invalid_size", `Offer ${offer.id} has ${offer.disk_space} GB of disk; ask for at most that.`);
    }
    return this.insert({
      ownerId, type: "local_volume", name, size, askId: offer.id, machineId: offer.machine_id ?? null,
      geolocation: offer.geolocation ?? null, storageCost: offer.storage_cost ?? 0,
    });
  }

  private linkable(ownerId: number, id: number, offer: Offer): VolumeRecord {
    const volume = this.owned(ownerId, id, badRequest);
    if (volume.type === "local_volume") {
      if (volume.machineId !== (offer.machine_id ?? null)) {
        throw badRequest("volume_wrong_machine", `Local volume ${id} is on machine ${volume.machineId}, offer ${offer.id} on machine ${offer.machine_id}: rent an offer of that machine, or use a network volume.`);
      }
      if (volume.instances.length) {
        throw badRequest("volume_in_use", `Local volume ${id} is attached to instance ${volume.instances[0]}: destroy that instance first.`);
      }
    }
    return volume;
  }

  private owned(ownerId: number, id: number, refuse: typeof notFound | typeof badRequest): VolumeRecord {
    const volume = this.volumes.get(id);
    if (!volume || volume.ownerId !== ownerId) {
      throw refuse("no_such_volume", `Volume ${id} does not exist or is not yours. List your volumes, or create one first.`);
    }
    return volume;
  }

  private insert(fields: Omit<VolumeRecord, "id" | "createdAt" | "instances" | "name"> & { name?: string }): VolumeRecord {
    const id = this.nextId++;
    const volume: VolumeRecord = { ...fields, id, name: fields.name ?? `volume-${id}`, createdAt: this.deps.now(), instances: [] };
    this.volumes.set(id, volume);
    return volume;
  }
}

export const round6 = (n: number) => Number(n.toFixed(6));

/**
 * An offer as searches show it: `id` is its `ask_contract_id` (clients create a volume with the `id` a search
 * shows); `reliability` is the cluster's `reliability2`; `storage_cost_total` is the hourly cost of the space on
 * offer, so it follows what is left of it. `score` ranks offers (the public Python client orders by it): read
 * bandwidth for the money, weighed by reliability.
 */
function searchedNetworkOffer(offer: NetworkVolumeOffer): NetworkVolumeOffer {
  return {
    id: offer.ask_contract_id,
    ...offer,
    reliability: offer.reliability2,
    storage_cost_total: round6(hourlyStorage(offer.storage_cost, offer.disk_space)),
    score: typeof offer.score === "number" ? offer.score : round2((offer.reliability2 * offer.nw_disk_avg_bw) / (100 * offer.storage_cost)),
  };
}

const round2 = (n: number) => Number(n.toFixed(2));

/** What a local volume offer shows of its machine, as the machine's offer has it (docs/service-facts.md#records-as-the-vendor-describes-them). */
const FROM_THE_MACHINE = [
  "bundle_id", "cpu_arch", "cpu_ghz", "cpu_name", "cuda_max_good", "disk_bw", "disk_name", "driver_vers", "driver_version", "duration",
  "external", "geolocode", "gpu_arch", "host_id", "mobo_name", "reliability_mult", "static_ip", "vericode", "verification", "vms_enabled",
] as const;

/**
 * A machine's disk as a local volume offer: its own ask id, its disk, its network and its storage price, the
 * machine's fields, and `storage_total_cost`, the hourly price of the `allocated` GB the search asks for (the
 * vendor's example: a GB's).
 */
function searchedLocalOffer(offer: Offer, allocated: number): NetworkVolumeOffer {
  const disk = offer.disk_space ?? 0;
  const bw = Math.round(offer.disk_bw ?? 0);
  const machine = Object.fromEntries(FROM_THE_MACHINE.map((field) => [field, offer[field] ?? null]));
  const total = { storage_total_cost: round6(hourlyStorage(offer.storage_cost ?? 0, allocated)) };
  return searchedNetworkOffer({
    ...machine,
    ...total,
    ask_contract_id: offer.id,
    machine_id: offer.machine_id ?? null,
    disk_space: disk,
    inet_up: offer.inet_up ?? 0,
    inet_down: offer.inet_down ?? 0,
    reliability2: offer.reliability2 ?? offer.reliability ?? 0,
    verified: offer.verified ?? offer.verification === "verified",
    geolocation: offer.geolocation ?? "",
    nw_disk_avg_bw: bw,
    nw_disk_max_bw: bw,
    nw_disk_min_bw: bw,
    start_date: offer.start_date ?? 0,
    end_date: offer.end_date ?? 0,
    storage_cost: offer.storage_cost ?? 0,
    storage_cost_total: 0,
    score: offer.score ?? 0,
  });
}

/**
 * Runs a volume offer search. `geolocation` matches its full text or its two-letter country code (the spec's
 * example filters with codes), as in offer search; filters see `disk_bw` as the average read bandwidth, and
 * `duration` as seconds left on the offer.
 */
function runVolumeSearch(offers: NetworkVolumeOffer[], q: VolumeQuery): NetworkVolumeOffer[] {
  const { order, limit, allocated_storage, ...filters } = q;
  return search(offers, { filters: atLeast(filters, "disk_space", allocated_storage), order, limit }, VOLUME_OFFER_FIELDS, {
    defaultLimit: DEFAULT_LIMIT,
    maxLimit: MAX_LIMIT,
    filterView: (offer) => ({
      ...offer,
      disk_bw: offer.nw_disk_avg_bw,
      duration: offer.end_date - offer.start_date,
    }),
  });
}
