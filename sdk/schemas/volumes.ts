import { z } from "zod";
import { FieldFilter, Order } from "./filters";

/** An offer of storage, network (a cluster's shared disk) or local (a machine's disk), as volume searches return it. */
export const VolumeOffer = z.looseObject({
  ask_contract_id: z.number().int(),
  disk_space: z.number(),
  inet_up: z.number(),
  inet_down: z.number(),
  reliability2: z.number(),
  verified: z.boolean(),
  geolocation: z.string(),
  nw_disk_avg_bw: z.number().int(),
  nw_disk_max_bw: z.number().int(),
  nw_disk_min_bw: z.number().int(),
  start_date: z.number(),
  end_date: z.number(),
  storage_cost: z.number(),
  storage_cost_total: z.number(),
});
export type VolumeOffer = z.infer<typeof VolumeOffer>;

/** `q` of a volume offer search: `order` and `limit`, every other key a field filter. Unknown fields are ignored. */
export const VolumeQuery = z
  .object({ order: Order.optional(), limit: z.coerce.number().int().positive().optional() })
  .catchall(z.union([FieldFilter, z.unknown()]));
export type VolumeQuery = z.infer<typeof VolumeQuery>;

/** `POST /api/v0/network_volumes/search/` and `POST /api/v0/volumes/search/`. */
export const VolumeSearchRequest = z.object({ q: VolumeQuery }).strict();
export type VolumeSearchRequest = z.infer<typeof VolumeSearchRequest>;
export const VolumeSearchResponse = z.looseObject({ success: z.boolean(), offers: z.array(VolumeOffer) });

/** `PUT /api/v0/network_volumes/`: `id` is a network volume offer id, `size` in GB. */
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
export const VolumeDeleteQuery = z.object({ id: z.coerce.number().int().nonnegative() });

/** A volume of the caller's. `instances` lists the instances it is attached to. */
export const Volume = z.looseObject({
  id: z.number().int(),
  type: VolumeType,
  name: z.string().optional(),
  disk_space: z.number(),
  ask_contract_id: z.number().int(),
  machine_id: z.number().int().nullable().optional(),
  geolocation: z.string().nullable().optional(),
  status: z.string(),
  start_date: z.number(),
  storage_cost: z.number().optional(),
  storage_cost_total: z.number().optional(),
  instances: z.array(z.number().int()),
});
export type Volume = z.infer<typeof Volume>;

export const VolumeListResponse = z.looseObject({ volumes: z.array(Volume) });
export const CreateNetworkVolumeResponse = z.looseObject({ success: z.boolean(), volume_id: z.number().int(), volume: Volume });
