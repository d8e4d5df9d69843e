import type { Caller } from "./call";
import { GpuRentalError, NetworkVolumesUnavailableError } from "./errors";
import {
  CreateNetworkVolumeResponse,
  SuccessResponse,
  Volume,
  VolumeListResponse,
  VolumeListType,
  volumeNameOf,
  VolumeOffer,
  VolumeQuery,
  VolumeSearchResponse,
} from "./schemas";

/** Network volume offers (`POST /api/v0/network_volumes/search/`) matching `q`. */
async function searchNetworkVolumeOffers(client: Caller, q: VolumeQuery = {}): Promise<VolumeOffer[]> {
  const res = await networkVolumeCall(client.call({ method: "POST", path: "/api/v0/network_volumes/search/", body: { q }, schema: VolumeSearchResponse }));
  return res.offers;
}

/**
 * Local volume offers, one per machine on the market (`POST /api/v0/volumes/search/`). The query is the body itself,
 * not wrapped in `q`: so the vendor's description (`limit` at the top) and the service's public client send it
 * (docs/service-facts.md#local-volumes).
 */
async function searchLocalVolumeOffers(client: Caller, q: VolumeQuery = {}): Promise<VolumeOffer[]> {
  const res = await client.call({ method: "POST", path: "/api/v0/volumes/search/", body: q, schema: VolumeSearchResponse });
  return res.offers;
}

/** Where each kind of volume is rented, and what it is called in messages. */
export const VOLUME_KINDS = {
  network_volume: { path: "/api/v0/network_volumes/", what: "network volume" },
  local_volume: { path: "/api/v0/volumes/", what: "local volume" },
} as const;

export type VolumeKind = keyof typeof VOLUME_KINDS;

/**
 * Creates a volume of `size` GB from a volume offer: a network volume offer (`PUT /api/v0/network_volumes/`), or a
 * machine's local volume offer (`PUT /api/v0/volumes/`). The service may answer the new volume's name, not its
 * id (`{success, volume_name, volume_size}`). A local volume's answer names it `V.<id>` (the name instances mount
 * it by, docs/service-facts.md#local-volumes): its id is read from there, and its record from the listing. Otherwise
 * the volume is found among the account's volumes of that kind by that name; a name other volumes of the account
 * share cannot tell them apart: the newest of that name is taken (createVolumeOnce, and the volume resources, make
 * every name unique with a creation token). Not retried after an unclear failure: a second try could create a
 * second volume.
 */
async function createVolume(client: Caller, kind: VolumeKind, request: { offerId: number; size: number; name?: string }): Promise<Volume> {
  const body = { id: request.offerId, size: request.size, ...(request.name !== undefined ? { name: request.name } : {}) };
  const sent = client.call({ method: "PUT", path: VOLUME_KINDS[kind].path, body, schema: CreateNetworkVolumeResponse, idempotent: false });
  const res = await (kind === "network_volume" ? networkVolumeCall(sent) : sent);
  if (res.volume) return res.volume;
  const id = res.volume_id ?? res.id ?? (kind === "local_volume" ? mountedId(res.volume_name) : undefined);
  const listed = await listVolumes(client, kind);
  if (id !== undefined) return listed.find((v) => v.id === id) ?? { id, ...(res.volume_name !== undefined && { name: res.volume_name }) };
  const named = listed.filter((v) => volumeNameOf(v) === res.volume_name);
  const newest = named.reduce<Volume | undefined>((best, v) => (best && best.id > v.id ? best : v), undefined);
  if (!newest) {
    throw new GpuRentalError(
      `The service created ${VOLUME_KINDS[kind].what} ${JSON.stringify(res.volume_name)} (${res.volume_size ?? request.size} GB) but does not list it among the ` +
        `account's volumes yet: list them (client.volumes.list(${JSON.stringify(kind)})) to find it, and delete it if it is not wanted: it bills.`,
    );
  }
  return newest;
}

/** The id in a volume's mount name `V.<id>`, if the name is one. */
function mountedId(name: string | undefined): number | undefined {
  const found = /^V\.(\d{1,15})$/.exec(name ?? "");
  return found ? Number(found[1]) : undefined;
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

/**
 * Deletes a volume that no instance uses (`DELETE /api/v0/volumes/`). The id goes in the body, as the vendor's
 * description asks, and in the query, as the service's public client sends it (docs/service-facts.md#local-volumes).
 */
async function deleteVolume(client: Caller, id: number): Promise<void> {
  await client.call({ method: "DELETE", path: `/api/v0/volumes/?id=${id}`, body: { id }, schema: SuccessResponse });
}

/**
 * A call of the network volume endpoints. Network volumes are not generally released: an account without the
 * feature is refused there (403 or 404 that is not about the key), which is said as such.
 */
async function networkVolumeCall<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof GpuRentalError && withoutTheFeature(error)) throw new NetworkVolumesUnavailableError(error);
    throw error;
  }
}

/** Not a bad key, a key without the permission, or an offer that is gone: a refusal of the account itself. */
function withoutTheFeature(error: GpuRentalError): boolean {
  return (error.status === 403 || error.status === 404) && !["auth_error", "permission_denied", "no_such_ask"].includes(error.code ?? "");
}

/** `client.volumes`: volumes and the offers they are made from. */
export function volumesApi(client: Caller) {
  return {
    searchNetworkOffers: (q?: VolumeQuery) => searchNetworkVolumeOffers(client, q),
    searchLocalOffers: (q?: VolumeQuery) => searchLocalVolumeOffers(client, q),
    createNetwork: (request: { offerId: number; size: number; name?: string }) => createVolume(client, "network_volume", request),
    /** A local volume on the machine of a local volume offer (an instance offer's id): only that machine's instances mount it. */
    createLocal: (request: { offerId: number; size: number; name?: string }) => createVolume(client, "local_volume", request),
    list: (type?: VolumeListType) => listVolumes(client, type),
    get: (id: number) => getVolume(client, id),
    delete: (id: number) => deleteVolume(client, id),
  };
}
