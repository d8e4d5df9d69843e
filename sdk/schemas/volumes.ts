import { z } from "zod";
import { Order } from "./filters";

/**
 * An offer of storage, network (a cluster's shared disk) or local (a machine's disk), as volume searches return it.
 * The two kinds differ (docs/service-facts.md#local-volumes): network offers carry `verified`, `nw_disk_*_bw` and
 * `storage_cost_total`, local offers `verification` and `storage_total_cost` (the vendor's description). Only what
 * renting needs is required: the offer's id, its free space and its price; read the rest with volumeOfferVerified
 * and volumeOfferTotalCost.
 */
export const VolumeOffer = z.looseObject({
  ask_contract_id: z.number().int(),
  disk_space: z.number(),
  storage_cost: z.number(),
  inet_up: z.number().nullable().optional(),
  inet_down: z.number().nullable().optional(),
  reliability2: z.number().nullable().optional(),
  verified: z.boolean().nullable().optional(),
  verification: z.string().nullable().optional(),
  geolocation: z.string().nullable().optional(),
  nw_disk_avg_bw: z.number().nullable().optional(),
  nw_disk_max_bw: z.number().nullable().optional(),
  nw_disk_min_bw: z.number().nullable().optional(),
  start_date: z.number().nullable().optional(),
  end_date: z.number().nullable().optional(),
  storage_cost_total: z.number().nullable().optional(),
  storage_total_cost: z.number().nullable().optional(),
});
export type VolumeOffer = z.infer<typeof VolumeOffer>;

/** Whether a volume offer is verified: `verified` (network offers) or `verification` (local offers); null when neither says. */
export function volumeOfferVerified(offer: VolumeOffer): boolean | null {
  if (typeof offer.verified === "boolean") return offer.verified;
  return typeof offer.verification === "string" ? offer.verification === "verified" : null;
}

/** The total storage cost of an offer or a volume, whichever name carries it (`storage_total_cost` or `storage_cost_total`). */
export function volumeOfferTotalCost(offer: { storage_total_cost?: number | null; storage_cost_total?: number | null }): number | null {
  return offer.storage_total_cost ?? offer.storage_cost_total ?? null;
}

/**
 * `q` of a volume offer search: `order`, `limit` and `allocated_storage` (GB wanted: offers with less space are
 * left out); every other key is a field filter (a FieldFilter, e.g. `{"geolocation": {"in": ["US", "CA"]}}`).
 * Keys of unknown fields are ignored, so other keys are not checked here: the search checks the filters of the
 * fields it knows.
 */
export const VolumeQuery = z
  .object({
    order: Order.optional(),
    limit: z.number().int().positive().optional(),
    allocated_storage: z.number().nonnegative().optional(),
  })
  .catchall(z.unknown());
export type VolumeQuery = z.infer<typeof VolumeQuery>;

/** `POST /api/v0/network_volumes/search/` and `POST /api/v0/volumes/search/`. */
export const VolumeSearchRequest = z.object({ q: VolumeQuery }).strict();
export type VolumeSearchRequest = z.infer<typeof VolumeSearchRequest>;
/** The answer of both searches: `{success, offers}` (the spec), or `{offers}` alone (the vendor's local search). */
export const VolumeSearchResponse = z.looseObject({ success: z.boolean().optional(), offers: z.array(VolumeOffer) });

/**
 * `PUT /api/v0/network_volumes/`: `id` is a network volume offer id, `size` in GB. The same body rents a local
 * volume at `PUT /api/v0/volumes/`, with `id` a local volume offer id.
 */
export const CreateNetworkVolumeRequest = z
  .object({ id: z.number().int().nonnegative(), size: z.number().positive(), name: z.string().optional() })
  .strict();
export type CreateNetworkVolumeRequest = z.infer<typeof CreateNetworkVolumeRequest>;

export const VolumeType = z.enum(["network_volume", "local_volume"]);
export type VolumeType = z.infer<typeof VolumeType>;
/** `?type=` of the volume list: one kind, or `all_volume` (the default). */
export const VolumeListType = z.enum(["network_volume", "local_volume", "all_volume"]);
export type VolumeListType = z.infer<typeof VolumeListType>;
export const VolumeListQuery = z.object({ type: VolumeListType.optional() });
/**
 * `DELETE /api/v0/volumes/`: the volume's id in the body (the vendor's description) or in the query (the service's
 * public client); the SDK sends both.
 */
export const VolumeDeleteQuery = z.object({ id: z.number().int().nonnegative().optional() });
export const VolumeDeleteRequest = z.object({ id: z.number().int().nonnegative().optional() });

/**
 * A volume of the caller's. The spec does not describe the record: only `id` is required (the SDK deletes by
 * it); the rest is what the emulator sends, optional so a live answer with other fields still parses. Its name
 * is `label` on the live service (the vendor's client shows it as the name), `name` as well in the emulator.
 * `instances` lists the instances it is attached to: their ids (as a Terraform provider tested against the
 * service reads them), or objects (as the vendor's description declares them); read them with attachedInstances.
 * Its total cost is `storage_total_cost` in the vendor's description, `storage_cost_total` in the emulator's older
 * answers: read it with volumeOfferTotalCost.
 */
export const Volume = z.looseObject({
  id: z.number().int(),
  type: z.union([VolumeType, z.string()]).nullable().optional(),
  name: z.string().nullable().optional(),
  label: z.string().nullable().optional(),
  disk_space: z.number().nullable().optional(),
  ask_contract_id: z.number().int().nullable().optional(),
  machine_id: z.number().int().nullable().optional(),
  geolocation: z.string().nullable().optional(),
  status: z.string().nullable().optional(),
  start_date: z.number().nullable().optional(),
  storage_cost: z.number().nullable().optional(),
  storage_cost_total: z.number().nullable().optional(),
  storage_total_cost: z.number().nullable().optional(),
  instances: z.array(z.union([z.number().int(), z.looseObject({ id: z.number().int().optional() })])).nullable().optional(),
});
export type Volume = z.infer<typeof Volume>;

/** The name of a volume (`label` on the live service, `name` too in the emulator). */
export function volumeNameOf(volume: Volume): string | null {
  return volume.name ?? volume.label ?? null;
}

/** The ids of the instances a volume is attached to, whichever form the listing gives them in. */
export function attachedInstances(volume: Volume): number[] {
  return (volume.instances ?? []).flatMap((entry) => (typeof entry === "number" ? [entry] : typeof entry.id === "number" ? [entry.id] : []));
}

export const VolumeListResponse = z.looseObject({ volumes: z.array(Volume) });
/**
 * `PUT /api/v0/network_volumes/`: `{success, volume_name, volume_size}` (the vendor's description): the new
 * volume's name, not its id, which the SDK finds by listing volumes (sdk/volumes.ts). An id in the answer
 * (`volume_id`, `id`, or a whole `volume`, as older emulators sent) is taken as it is.
 */
export const CreateNetworkVolumeResponse = z
  .looseObject({
    success: z.boolean().optional(),
    volume_name: z.string().optional(),
    volume_size: z.number().optional(),
    volume_id: z.number().int().optional(),
    id: z.number().int().optional(),
    volume: Volume.optional(),
  })
  .refine((res) => res.volume_name !== undefined || res.volume_id !== undefined || res.id !== undefined || res.volume !== undefined, {
    message: "the answer names no volume: volume_name (or an id) is required",
    path: ["volume_name"],
  });
export type CreateNetworkVolumeResponse = z.infer<typeof CreateNetworkVolumeResponse>;
