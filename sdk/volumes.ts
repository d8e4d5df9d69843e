import type { Caller } from "./call";
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
async function searchNetworkVolumeOffers(client: Caller, q: VolumeQuery = {}): Promise<VolumeOffer[]> {
  const res = await client.call({ method: "POST", path: "/api/v0/network_volumes/search/", body: { q }, schema: VolumeSearchResponse });
  return res.offers;
}

/** Local volume offers, one per machine on the market (`POST /api/v0/volumes/search/`). */
async function searchLocalVolumeOffers(client: Caller, q: VolumeQuery = {}): Promise<VolumeOffer[]> {
  const res = await client.call({ method: "POST", path: "/api/v0/volumes/search/", body: { q }, schema: VolumeSearchResponse });
  return res.offers;
}

/**
 * Creates a network volume of `size` GB from a network volume offer (`PUT /api/v0/network_volumes/`). Not
 * retried after an unclear failure: a second try could create a second volume.
 */
async function createNetworkVolume(client: Caller,
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
async function listVolumes(client: Caller, type: VolumeListType = "all_volume"): Promise<Volume[]> {
  const res = await client.call({ method: "GET", path: `/api/v0/volumes/?type=${type}`, schema: VolumeListResponse });
  return res.volumes;
}

/** Your volume with this id, of any kind, or null. */
async function getVolume(client: Caller, id: number): Promise<Volume | null> {
  return (await listVolumes(client)).find((v) => v.id === id) ?? null;
}

/** Deletes a volume that no instance uses (`DELETE /api/v0/volumes/?id=`). */
async function deleteVolume(client: Caller, id: number): Promise<void> {
  await client.call({ method: "DELETE", path: `/api/v0/volumes/?id=${id}`, body: {}, schema: SuccessResponse });
}

/** `client.volumes`: volumes and the offers they are made from. */
export function volumesApi(client: Caller) {
  return {
    searchNetworkOffers: (q?: VolumeQuery) => searchNetworkVolumeOffers(client, q),
    searchLocalOffers: (q?: VolumeQuery) => searchLocalVolumeOffers(client, q),
    createNetwork: (request: { offerId: number; size: number; name?: string }) => createNetworkVolume(client, request),
    list: (type?: VolumeListType) => listVolumes(client, type),
    get: (id: number) => getVolume(client, id),
    delete: (id: number) => deleteVolume(client, id),
  };
}
