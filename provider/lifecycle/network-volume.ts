import { z } from "zod";
import {
  attachedInstances, BadRequestError, createNetworkVolumeOnce, deletedOrGone, FieldFilter, GpuRentalClient, GpuRentalError, InterruptedError,
  nameWithoutToken as baseName, nameWithToken, NotFoundError, resourceToken, tokenOfVolume, Volume, volumeNameOf, VolumeOffer, VolumeQuery,
} from "../../sdk";
import { interruptedCreation } from "./creation";
import { ADOPT_ID, ResourceDescription } from "./description";
import type { Kind, Operation, Props } from "./kind";
import { changedKeys, definedOnly, specOf } from "./spec";

/**
 * The NetworkVolume kind: a network volume taken from a network volume offer. The offer (or the search for one)
 * is its identity; which offer was used is an output (`askContractId`).
 */

/** A network volume: what the schema, the argument types and docs/reference.md say of it. */
const DESCRIPTION: ResourceDescription = {
  name: "NetworkVolume",
  description:
    "A network volume. Network volumes are not generally released on the service (its own client hides them as not yet released): " +
    "an account without the feature is refused, reported as NetworkVolumesUnavailableError before anything is made. " +
    "The API shows no way to resize or rename one, so every change makes a new volume (before the old one is " +
    "deleted). A volume still attached to an instance is not deleted: destroy the instance first.",
  inputs: {
    offerId: { type: "integer", description: "Take the space from exactly this network volume offer (`ask_contract_id`)." },
    q: {
      type: "map",
      values: { type: "any" },
      tsType: "VolumeQuery",
      description:
        "Otherwise the cheapest offer (by `storage_cost`) with room for `size` matching this network volume offer search, e.g. " +
        '`{ geolocation: { in: ["US", "CA"] }, reliability2: { gte: 0.99 } }`.',
    },
    size: { type: "number", description: "GB." },
    name: { type: "string", description: "The volume's name." },
    adoptId: ADOPT_ID,
  },
  requiredInputs: ["size"],
  outputs: {
    volumeId: { type: "integer", description: "The volume's id (also the resource's id)." },
    askContractId: { type: "integer", nullable: true, description: "The network volume offer the space was taken from." },
    diskSpace: { type: "number", nullable: true, description: "Its size in GB." },
    volumeName: { type: "string", nullable: true, description: "The name the service gave the volume." },
    geolocation: { type: "string", nullable: true, description: "Where it is." },
    status: { type: "string", nullable: true, description: "Its status as the service reports it." },
    storageCost: { type: "number", nullable: true, description: "$/GB/month." },
    storageCostTotal: { type: "number", nullable: true, description: "$/hour for the whole volume." },
    instances: { type: "array", items: { type: "integer" }, description: "The instances it is attached to." },
  },
  requiredOutputs: ["volumeId", "instances"],
};

const NetworkVolumeSpec = z
  .object({
    /** Take space from exactly this network volume offer (`ask_contract_id` of the offer search). */
    offerId: z.number().int().nonnegative().optional(),
    /** Otherwise the cheapest offer (by `storage_cost`) matching this `q` of the network volume offer search. */
    q: VolumeQuery.optional(),
    /** GB. */
    size: z.number().positive(),
    name: z.string().optional(),
  })
  .refine((s) => s.offerId === undefined || s.q === undefined, {
    message: "give either offerId or q (a network volume offer search), not both",
    path: ["offerId"],
  });
export type NetworkVolumeSpec = z.infer<typeof NetworkVolumeSpec>;

const SPEC = specOf("NetworkVolume", NetworkVolumeSpec);

/** What the volume record reports. Nulls, never undefined. */
export interface NetworkVolumeOutputs {
  volumeId: number;
  /** The network volume offer the space was taken from. */
  askContractId: number | null;
  diskSpace: number | null;
  /** The name the service gave the volume (its own when `name` is not set). */
  volumeName: string | null;
  geolocation: string | null;
  status: string | null;
  storageCost: number | null;
  storageCostTotal: number | null;
  /** Instances the volume is attached to. */
  instances: number[];
}

/** The search when no offer is pinned: cheapest storage first. */
const DEFAULT_ORDER: [string, "asc" | "desc"][] = [["storage_cost", "asc"]];

export interface NetworkVolumeDiff {
  changes: boolean;
  /** The API shows no way to resize, rename or move a volume: a new size or name, or another offer, is a new volume. */
  replaces: string[];
  deleteBeforeReplace: boolean;
}

export const NETWORK_VOLUME: Kind<NetworkVolumeSpec, NetworkVolumeOutputs> = {
  description: DESCRIPTION,
  spec: SPEC,
  diff: diffNetworkVolumeSpec,
  create: createNetworkVolume,
  adopt: adoptNetworkVolume,
  read: readNetworkVolume,
  import: importNetworkVolume,
  update: updateNetworkVolume,
  delete: deleteNetworkVolume,
};

/**
 * The search (`q`) only said where to take the space: a new one changes nothing for the volume that exists, and is
 * recorded in place. So is pinning the offer the volume was taken from. Any other change makes a new volume,
 * before the old one goes, so its data can be copied over.
 */
export function diffNetworkVolumeSpec(olds: Props, news: Props, unknown?: unknown): NetworkVolumeDiff {
  const changed = changedKeys(SPEC.keys, olds, news, (_key, value) => value ?? null, unknown);
  // Unpinning keeps the volume; pinning keeps it when the pin is the offer it came from.
  const offerKept = news.offerId === undefined || news.offerId === null || news.offerId === olds.askContractId;
  const replaces = changed.filter((key) => key !== "q" && !(key === "offerId" && offerKept));
  return { changes: changed.length > 0, replaces, deleteBeforeReplace: false };
}

/** Records a new `q` (or the pinned offer it came from): nothing about the volume itself changes. */
async function updateNetworkVolume(id: string, _olds: Props, spec: NetworkVolumeSpec, op: Operation): Promise<NetworkVolumeSpec & NetworkVolumeOutputs> {
  const volume = await findVolume(op.client, Number(id));
  if (!volume) throw new GpuRentalError(`Network volume ${id} no longer exists; run \`pulumi refresh\` to drop it from the stack.`);
  return { ...spec, ...outputsOf(volume) };
}

/**
 * Creates the volume (`PUT /api/v0/network_volumes/`), on the pinned offer or on the cheapest one with room
 * for `size`, named `<name>-<token>`: a creation whose answer was lost is found by its token, never made twice.
 * With `identity` (a Pulumi resource) the token is the resource's: a volume an earlier, cut-off run made for it is
 * taken over when it has the declared size, name and offer, and deleted when not.
 */
async function createNetworkVolume(spec: NetworkVolumeSpec, op: Operation): Promise<{ id: string; outs: NetworkVolumeSpec & NetworkVolumeOutputs }> {
  const client = op.client;
  const token = op.identity && resourceToken(op.identity);
  const left = token ? await takeLeftBehind(client, spec, token) : null;
  if (left) return { id: String(left.id), outs: { ...spec, ...outputsOf(left) } };
  const offerId = spec.offerId ?? (await cheapestOffer(client, spec.q ?? {}, spec.size)).ask_contract_id;
  let created: Volume;
  try {
    ({ volume: created } = await createNetworkVolumeOnce(client, definedOnly({ offerId, size: spec.size, name: spec.name }), { clock: op.clock, token, signal: op.signal }));
  } catch (error) {
    throw error instanceof InterruptedError ? interruptedCreation(error, "The network volume's creation") : error;
  }
  // The creation answer may name the volume only: the listing has the rest.
  const volume = (await findVolume(client, created.id)) ?? created;
  return { id: String(volume.id), outs: { ...spec, ...outputsOf(volume) } };
}

/** The volume a cut-off run made for this resource (carrying its token), if it is as declared; any other is deleted. */
async function takeLeftBehind(client: GpuRentalClient, spec: NetworkVolumeSpec, token: string): Promise<Volume | null> {
  let taken: Volume | null = null;
  for (const volume of (await client.volumes.list("network_volume")).filter((v) => tokenOfVolume(v) === token)) {
    const fits = volume.disk_space === spec.size && volume.name === nameWithToken(spec.name, token) && (spec.offerId === undefined || volume.ask_contract_id === spec.offerId);
    if (fits && !taken) taken = volume;
    else await deleteVolume(client, volume.id);
  }
  return taken;
}

/** The volume as it is now, or null when it is gone (refresh then drops it). */
async function readNetworkVolume(id: string, props: Props, op: Operation): Promise<(Record<string, unknown> & NetworkVolumeOutputs) | null> {
  const volume = await findVolume(op.client, Number(id));
  return volume ? { ...props, ...outputsOf(volume) } : null;
}

/**
 * Takes an existing network volume of the account under management (`adoptId`): it must have the declared size
 * (and name, when one is declared), since neither can be changed.
 */
async function adoptNetworkVolume(id: string, spec: NetworkVolumeSpec, op: Operation): Promise<{ id: string; outs: NetworkVolumeSpec & NetworkVolumeOutputs }> {
  const volume = await findVolume(op.client, Number(id));
  if (!volume) {
    throw new NotFoundError(`Network volume ${id} cannot be adopted: the account has no network volume ${id}. Check adoptId, and the account the resource uses.`);
  }
  const differs = [
    volume.disk_space !== spec.size && `its size is ${volume.disk_space} GB, the program declares size ${spec.size}`,
    spec.name !== undefined && baseName(volumeNameOf(volume)) !== spec.name && `its name is ${JSON.stringify(volumeNameOf(volume))}, the program declares ${JSON.stringify(spec.name)}`,
  ].filter(Boolean);
  if (differs.length) {
    throw new GpuRentalError(`Network volume ${id} cannot be adopted as declared: ${differs.join("; ")}. Declare what it has (a volume cannot be resized or renamed).`);
  }
  return { id, outs: { ...spec, ...outputsOf(volume) } };
}

/**
 * An existing network volume as `pulumi import` takes it: the inputs that declare it as it is (its size, and its
 * name without a creation token), and its outputs. Null when the account has no such volume.
 */
async function importNetworkVolume(id: string, op: Operation): Promise<{ inputs: Record<string, unknown>; outs: Record<string, unknown> } | null> {
  const volume = await findVolume(op.client, Number(id));
  if (!volume) return null;
  const inputs = definedOnly({ size: volume.disk_space ?? undefined, name: baseName(volumeNameOf(volume)) || undefined });
  return { inputs, outs: { ...inputs, ...outputsOf(volume) } };
}

/** A volume still attached to an instance cannot be deleted; `instances` says which. */
export class VolumeInUseError extends GpuRentalError {
  override name = "VolumeInUseError";
  constructor(
    readonly volumeId: number,
    readonly instances: number[],
  ) {
    super(
      `Network volume ${volumeId} is attached to instance ${instances.join(", ")}: destroy ${instances.length > 1 ? "those instances" : "that instance"} first, then delete the volume again. ` +
        "(In a Pulumi program, make the instances depend on the volume, so they are destroyed before it.)",
      { status: 400, code: "volume_in_use" },
    );
  }
}

/** Deletes the volume (`DELETE /api/v0/volumes/?id=`); one already gone counts as deleted. */
async function deleteNetworkVolume(id: string, _props: Props, op: Operation): Promise<void> {
  await deleteVolume(op.client, Number(id));
}

async function deleteVolume(client: GpuRentalClient, id: number): Promise<void> {
  const volume = await findVolume(client, id);
  if (!volume) return;
  if (attachedInstances(volume).length) throw new VolumeInUseError(volume.id, attachedInstances(volume));
  await deletedOrGone(() => client.volumes.delete(volume.id).catch((error) => refusedInUse(client, volume.id, error)));
}

/** Attached between the listing and the deletion: says by which instance, as above. */
async function refusedInUse(client: GpuRentalClient, id: number, error: unknown): Promise<never> {
  if (error instanceof BadRequestError && error.code === "volume_in_use") {
    const volume = await findVolume(client, id);
    throw new VolumeInUseError(id, volume ? attachedInstances(volume) : []);
  }
  throw error;
}

async function cheapestOffer(client: GpuRentalClient, q: VolumeQuery, size: number): Promise<VolumeOffer> {
  // Offers without room for the volume are left out by the search itself.
  const given = q.disk_space as FieldFilter | undefined;
  const disk = { ...given, gte: Math.max(size, Number(given?.gte ?? 0)) };
  const [offer] = await client.volumes.searchNetworkOffers({ ...q, disk_space: disk, order: q.order ?? DEFAULT_ORDER, limit: 1 });
  if (!offer) {
    throw new GpuRentalError(`No network volume offer has ${size} GB free and matches q ${JSON.stringify(q)}: ask for less space, or widen the search.`);
  }
  return offer;
}

async function findVolume(client: GpuRentalClient, id: number): Promise<Volume | null> {
  return (await client.volumes.list("network_volume")).find((v) => v.id === id) ?? null;
}

function outputsOf(volume: Volume): NetworkVolumeOutputs {
  return {
    volumeId: volume.id,
    askContractId: volume.ask_contract_id ?? null,
    diskSpace: volume.disk_space ?? null,
    volumeName: volumeNameOf(volume),
    geolocation: volume.geolocation ?? null,
    status: volume.status ?? null,
    storageCost: volume.storage_cost ?? null,
    storageCostTotal: volume.storage_cost_total ?? null,
    instances: attachedInstances(volume),
  };
}
