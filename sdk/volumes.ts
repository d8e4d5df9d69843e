import type { GpuRentalClient } from "./client";
import {
  CreateNetworkVolumeResponse,
  SuccessResponse,
  Volume,
  VolumeListResponse,
  VolumeListType,
  VolumeOffer,
  VolumeQuery,
  VolumeSearchResponse,
} from "./schemas";

/** Network volume offers (`POST /api/v0/network_volumes/search/`) matching `q`. */
export async function searchNetworkVolumeOffers(client: GpuRentalClient, q: VolumeQuery = {}): Promise<VolumeOffer[]> {
  const res = await client.call({ method: "POST", path: "/api/v0/network_volumes/search/", body: { q }, schema: VolumeSearchResponse });
  return res.offers;
}

/** Local volume offers, one per machine on the market (`POST /api/v0/volumes/search/`). */
export async function searchLocalVolumeOffers(client: GpuRentalClient, q: VolumeQuery = {}): Promise<VolumeOffer[]> {
  const res = await client.call({ method: "POST", path: "/api/v0/volumes/search/", body: { q }, schema: VolumeSearchResponse });
  return res.offers;
}

/**
 * Creates a network volume of `size` GB from a network volume offer (`PUT /api/v0/network_volumes/`). Not
 * retried after an unclear failure: a second try could create a second volume.
 */
export async function createNetworkVolume(
  client: GpuRentalClient,
  request: { offerId: number; size: number; name?: string },
): Promise<Volume> {
  const body = { id: request.offerId, size: request.size, ...(request.name !== undefined ? { name: request.name } : {}) };
  const res = await client.call({
    method: "PUT",
    path: "/api/v0/network_volumes/",
    body,
    schema: CreateNetworkVolumeResponse,
    idempotent: false,
  });
  return res.volume ?? { id: res.volume_id! };
}

/** Your volumes, of one kind or all (`GET /api/v0/volumes?type=`). */
export async function listVolumes(client: GpuRentalClient, type: VolumeListType = "all_volume"): Promise<Volume[]> {
  const res = await client.call({ method: "GET", path: `/api/v0/volumes/?type=${type}`, schema: VolumeListResponse });
  return res.volumes;
}

/** Your volume with this id, of any kind, or null. */
export async function getVolume(client: GpuRentalClient, id: number): Promise<Volume | null> {
  return (await listVolumes(client)).find((v) => v.id === id) ?? null;
}

/** Deletes a volume that no instance uses (`DELETE /api/v0/volumes/?id=`). */
export async function deleteVolume(client: GpuRentalClient, id: number): Promise<void> {
  await client.call({ method: "DELETE", path: `/api/v0/volumes/?id=${id}`, body: {}, schema: SuccessResponse });
}
