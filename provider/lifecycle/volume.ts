import { z } from "zod";
import {
  attachedInstances, BadRequestError, createVolumeOnce, deletedOrGone, FieldFilter, GpuRentalClient, GpuRentalError, InterruptedError, OfferUnavailableError, VOLUME_KINDS, VolumeKind,
  nameWithoutToken as baseName, nameWithToken, NotFoundError, resourceToken, tokenOfVolume, Volume, volumeNameOf, VolumeOffer, volumeOfferTotalCost, VolumeQuery,
} from "../../sdk";
import { interruptedCreation } from "./creation";
import { describeResource } from "./describe";
import type { Kind, Operation, Props } from "./kind";
import { CheckFailure, changedKeys, definedOnly, knownValues, specOf } from "./spec";

/**
 * The volume kinds, one mechanism for both: a network volume taken from a network volume offer, and a local
 * volume on one machine's disk, taken from that machine's local volume offer. The offer (or the search for one) is
 * its identity; which offer was used is an output (`askContractId`).
 */

/** What differs between the kinds of volume: their words, where they are searched and rented. */
export interface VolumeKindSettings {
  kind: VolumeKind;
  /** The resource kind's name, e.g. `NetworkVolume`. */
  name: string;
  /** What the description says first. */
  summary: string;
  search: (client: GpuRentalClient, q: VolumeQuery) => Promise<VolumeOffer[]>;
}

/**
 * A volume kind's inputs, in its words: the offer (or the search for one) is its identity; which offer was used is
 * an output (`askContractId`).
 */
function volumeSpecOf(settings: VolumeKindSettings) {
  const { what } = VOLUME_KINDS[settings.kind];
  return z
    .object({
      offerId: z.number().int().nonnegative().optional().meta({ description: `Take the space from exactly this ${what} offer (\`ask_contract_id\`).` }),
      q: VolumeQuery.optional().meta({
        tsType: "VolumeQuery",
        description:
          `Otherwise the cheapest offer (by \`storage_cost\`) with room for \`size\` matching this ${what} offer search, e.g. ` +
          '`{ geolocation: { in: ["US", "CA"] }, reliability2: { gte: 0.99 } }`. An offer taken by someone else before the volume is made is searched again.',
      }),
      size: z.number().positive().meta({ replaces: true, description: "GB." }),
      name: z.string().optional().meta({ replaces: true, description: "The volume's name." }),
    })
    .refine((s) => s.offerId === undefined || s.q === undefined, {
      message: "give either offerId or q (a volume offer search), not both",
      path: ["offerId"],
    });
}
export type VolumeSpec = z.infer<ReturnType<typeof volumeSpecOf>>;

/** What the volume record reports. Nulls, never undefined. */
function volumeOutputsOf(settings: VolumeKindSettings) {
  const { what } = VOLUME_KINDS[settings.kind];
  return z.object({
    volumeId: z.int().meta({ description: "The volume's id (also the resource's id): an Instance mounts it by it (`volumes`)." }),
    askContractId: z.int().nullable().meta({ description: `The ${what} offer the space was taken from.` }),
    diskSpace: z.number().nullable().meta({ description: "Its size in GB." }),
    // Its own when `name` is not set.
    volumeName: z.string().nullable().meta({ description: "The name the service gave the volume." }),
    machineId: z.int().nullable().meta({ description: "The machine it is on (a local volume): only that machine's instances mount it." }),
    geolocation: z.string().nullable().meta({ description: "Where it is." }),
    status: z.string().nullable().meta({ description: "Its status as the service reports it." }),
    storageCost: z.number().nullable().meta({ description: "$/GB/month." }),
    storageCostTotal: z.number().nullable().meta({ description: "$/hour for the whole volume." }),
    instances: z.array(z.int()).meta({ description: "The instances it is attached to." }),
  });
}
export type VolumeOutputs = z.infer<ReturnType<typeof volumeOutputsOf>>;

/** The search when no offer is pinned: cheapest storage first. */
const DEFAULT_ORDER: [string, "asc" | "desc"][] = [["storage_cost", "asc"]];

/** How many times an offer taken by someone else between the search and the creation is searched for again. */
const OFFER_TRIES = 3;

export interface VolumeDiff {
  changes: boolean;
  /** The API shows no way to resize, rename or move a volume: a new size or name, or another offer, is a new volume. */
  replaces: string[];
  deleteBeforeReplace: boolean;
}

/** A volume kind: its description, spec and lifecycle, for the kind of volume `settings` says. */
export function volumeKind(settings: VolumeKindSettings): Kind<VolumeSpec, VolumeOutputs> {
  const inputs = volumeSpecOf(settings);
  const spec = specOf(settings.name, inputs);
  const volumes = new VolumeCalls(settings);
  return {
    description: describeResource({
      name: settings.name,
      description:
        `${settings.summary} The API shows no way to resize or rename one, so every change makes a new volume (before the old one is ` +
        "deleted). A volume still attached to an instance (running or stopped) is not deleted: destroy the instance first.",
      inputs,
      outputs: volumeOutputsOf(settings),
    }),
    spec,
    diff: (olds, news, unknown) => diffVolumeSpec(spec.keys, olds, news, unknown),
    create: (given, op) => volumes.create(given, op),
    adopt: (id, given, op) => volumes.adopt(id, given, op),
    read: async (id, props, op) => {
      const volume = await volumes.find(op.client, Number(id));
      return volume ? { ...props, ...outputsOf(volume) } : null;
    },
    import: (id, op) => volumes.import(id, op),
    refusals: (news, unknown, op) => volumes.refusals(news, unknown, op),
    update: (id, _olds, given, op) => volumes.update(id, given, op),
    delete: (id, _props, op) => volumes.delete(op.client, Number(id)),
  };
}

/**
 * The search (`q`) only said where to take the space: a new one changes nothing for the volume that exists, and is
 * recorded in place. So is pinning the offer the volume was taken from. Any other change makes a new volume,
 * before the old one goes, so its data can be copied over.
 */
function diffVolumeSpec(keys: readonly string[], olds: Props, news: Props, unknown?: unknown): VolumeDiff {
  const changed = changedKeys(keys, olds, news, (_key, value) => value ?? null, unknown);
  // Unpinning keeps the volume; pinning keeps it when the pin is the offer it came from.
  const offerKept = news.offerId === undefined || news.offerId === null || news.offerId === olds.askContractId;
  const replaces = changed.filter((key) => key !== "q" && !(key === "offerId" && offerKept));
  return { changes: changed.length > 0, replaces, deleteBeforeReplace: false };
}

/** The calls of one kind of volume. */
class VolumeCalls {
  constructor(private readonly settings: VolumeKindSettings) {}

  /** The kind as a sentence begins with it, e.g. `Local volume`. */
  private get subject(): string {
    return this.what[0].toUpperCase() + this.what.slice(1);
  }

  /** The kind in a sentence, e.g. `local volume`. */
  private get what(): string {
    return VOLUME_KINDS[this.settings.kind].what;
  }

  /** Records a new `q` (or the pinned offer it came from): nothing about the volume itself changes. */
  async update(id: string, spec: VolumeSpec, op: Operation): Promise<VolumeSpec & VolumeOutputs> {
    const volume = await this.find(op.client, Number(id));
    if (!volume) throw new GpuRentalError(`${this.subject} ${id} no longer exists; run \`pulumi refresh\` to drop it from the stack.`);
    return { ...spec, ...outputsOf(volume) };
  }

  /**
   * Creates the volume, on the pinned offer or on the cheapest one with room for `size`, named `<name>-<token>`: a
   * creation whose answer was lost is found by its token, never made twice. An offer taken by someone else in
   * between (`no_such_ask`) is searched for again, unless it was pinned. With `identity` (a Pulumi resource) the
   * token is the resource's: a volume an earlier, cut-off run made for it is taken over when it has the declared
   * size, name and offer, and deleted when not.
   */
  async create(spec: VolumeSpec, op: Operation): Promise<{ id: string; outs: VolumeSpec & VolumeOutputs }> {
    const client = op.client;
    const token = op.identity && resourceToken(op.identity);
    const left = token ? await this.takeLeftBehind(client, spec, token) : null;
    if (left) return { id: String(left.id), outs: { ...spec, ...outputsOf(left) } };
    let created: Volume | undefined;
    for (let tries = 1; !created; tries++) {
      const offerId = spec.offerId ?? (await this.cheapestOffer(client, spec.q ?? {}, spec.size)).ask_contract_id;
      try {
        const request = definedOnly({ offerId, size: spec.size, name: spec.name });
        ({ volume: created } = await createVolumeOnce(client, this.settings.kind, request, { clock: op.clock, token, signal: op.signal }));
      } catch (error) {
        if (error instanceof InterruptedError) throw interruptedCreation(error, `The ${this.what}'s creation`);
        const vanished = error instanceof OfferUnavailableError;
        if (!vanished || spec.offerId !== undefined || tries >= OFFER_TRIES) throw error;
      }
    }
    // The creation answer may name the volume only: the listing has the rest.
    const volume = (await this.find(client, created.id)) ?? created;
    return { id: String(volume.id), outs: { ...spec, ...outputsOf(volume) } };
  }

  /**
   * What the service would refuse of a creation, said at preview: a pinned offer that is gone or has less room
   * than `size`, or no offer of the search with room for it. Nothing while the inputs are not known yet.
   */
  async refusals(news: Props, unknown: unknown, op: Operation): Promise<CheckFailure[]> {
    const spec = knownValues(news, ["size", "offerId", "q"], unknown) as VolumeSpec | undefined;
    if (!spec || spec.size === undefined) return [];
    if (spec.offerId === undefined) {
      const q = spec.q ?? {};
      return (await this.searchCheapest(op.client, q, spec.size)) ? [] : [{ property: "size", reason: this.noOffer(q, spec.size) }];
    }
    const [offer] = await this.settings.search(op.client, { ask_contract_id: { eq: spec.offerId }, limit: 1 });
    if (!offer) return [{ property: "offerId", reason: `${this.subject} offer ${spec.offerId} is not on the market (it does not exist, or its machine is rented): search the offers again.` }];
    if (offer.disk_space < spec.size) {
      return [{ property: "size", reason: `${this.subject} offer ${spec.offerId} has ${offer.disk_space} GB free: ask for at most that, or pick another offer.` }];
    }
    return [];
  }

  /** The volume a cut-off run made for this resource (carrying its token), if it is as declared; any other is deleted. */
  private async takeLeftBehind(client: GpuRentalClient, spec: VolumeSpec, token: string): Promise<Volume | null> {
    let taken: Volume | null = null;
    for (const volume of (await client.volumes.list(this.settings.kind)).filter((v) => tokenOfVolume(v) === token)) {
      const fits = volume.disk_space === spec.size && volume.name === nameWithToken(spec.name, token) && (spec.offerId === undefined || volume.ask_contract_id === spec.offerId);
      if (fits && !taken) taken = volume;
      else await this.delete(client, volume.id);
    }
    return taken;
  }

  /**
   * Takes an existing volume of the account under management (`adoptId`): it must have the declared size (and
   * name, when one is declared), since neither can be changed.
   */
  async adopt(id: string, spec: VolumeSpec, op: Operation): Promise<{ id: string; outs: VolumeSpec & VolumeOutputs }> {
    const volume = await this.find(op.client, Number(id));
    if (!volume) {
      throw new NotFoundError(`${this.subject} ${id} cannot be adopted: the account has no ${this.what} ${id}. Check adoptId, and the account the resource uses.`);
    }
    const differs = [
      volume.disk_space !== spec.size && `its size is ${volume.disk_space} GB, the program declares size ${spec.size}`,
      spec.name !== undefined && baseName(volumeNameOf(volume)) !== spec.name && `its name is ${JSON.stringify(volumeNameOf(volume))}, the program declares ${JSON.stringify(spec.name)}`,
    ].filter(Boolean);
    if (differs.length) {
      throw new GpuRentalError(`${this.subject} ${id} cannot be adopted as declared: ${differs.join("; ")}. Declare what it has (a volume cannot be resized or renamed).`);
    }
    return { id, outs: { ...spec, ...outputsOf(volume) } };
  }

  /**
   * An existing volume as `pulumi import` takes it: the inputs that declare it as it is (its size, and its name
   * without a creation token), and its outputs. Null when the account has no such volume.
   */
  async import(id: string, op: Operation): Promise<{ inputs: Record<string, unknown>; outs: Record<string, unknown> } | null> {
    const volume = await this.find(op.client, Number(id));
    if (!volume) return null;
    const inputs = definedOnly({ size: volume.disk_space ?? undefined, name: baseName(volumeNameOf(volume)) || undefined });
    return { inputs, outs: { ...inputs, ...outputsOf(volume) } };
  }

  /** Deletes the volume (`DELETE /api/v0/volumes/?id=`); one already gone counts as deleted. */
  async delete(client: GpuRentalClient, id: number): Promise<void> {
    const volume = await this.find(client, id);
    if (!volume) return;
    if (attachedInstances(volume).length) throw new VolumeInUseError(volume.id, attachedInstances(volume));
    await deletedOrGone(() => client.volumes.delete(volume.id).catch((error) => this.refusedInUse(client, volume.id, error)));
  }

  /** Attached between the listing and the deletion: says by which instance, as above. */
  private async refusedInUse(client: GpuRentalClient, id: number, error: unknown): Promise<never> {
    if (error instanceof BadRequestError && error.code === "volume_in_use") {
      const volume = await this.find(client, id);
      throw new VolumeInUseError(id, volume ? attachedInstances(volume) : []);
    }
    throw error;
  }

  private async cheapestOffer(client: GpuRentalClient, q: VolumeQuery, size: number): Promise<VolumeOffer> {
    const offer = await this.searchCheapest(client, q, size);
    if (!offer) throw new GpuRentalError(this.noOffer(q, size));
    return offer;
  }

  /** The cheapest offer of the search with room for `size`, if any (the search itself leaves out those without). */
  private async searchCheapest(client: GpuRentalClient, q: VolumeQuery, size: number): Promise<VolumeOffer | undefined> {
    const given = q.disk_space as FieldFilter | undefined;
    const disk = { ...given, gte: Math.max(size, Number(given?.gte ?? 0)) };
    const [offer] = await this.settings.search(client, { ...q, disk_space: disk, order: q.order ?? DEFAULT_ORDER, limit: 1 });
    return offer;
  }

  private noOffer(q: VolumeQuery, size: number): string {
    return `No ${this.what} offer has ${size} GB free and matches q ${JSON.stringify(q)}: ask for less space, or widen the search.`;
  }

  async find(client: GpuRentalClient, id: number): Promise<Volume | null> {
    return (await client.volumes.list(this.settings.kind)).find((v) => v.id === id) ?? null;
  }
}

/** A volume still attached to an instance cannot be deleted; `instances` says which. */
export class VolumeInUseError extends GpuRentalError {
  override name = "VolumeInUseError";
  constructor(
    readonly volumeId: number,
    readonly instances: number[],
  ) {
    super(
      `Volume ${volumeId} is attached to instance ${instances.join(", ")}: destroy ${instances.length > 1 ? "those instances" : "that instance"} first, then delete the volume again. ` +
        "(In a Pulumi program, make the instances depend on the volume, so they are destroyed before it.)",
      { status: 400, code: "volume_in_use" },
    );
  }
}

function outputsOf(volume: Volume): VolumeOutputs {
  return {
    volumeId: volume.id,
    askContractId: volume.ask_contract_id ?? null,
    diskSpace: volume.disk_space ?? null,
    volumeName: volumeNameOf(volume),
    machineId: volume.machine_id ?? null,
    geolocation: volume.geolocation ?? null,
    status: volume.status ?? null,
    storageCost: volume.storage_cost ?? null,
    storageCostTotal: volumeOfferTotalCost(volume),
    instances: attachedInstances(volume),
  };
}
