import { FastifyInstance } from "fastify";
import { z } from "zod";
import {
  CreateNetworkVolumeRequest,
  CreateNetworkVolumeResponse,
  orderOf,
  SuccessResponse,
  typedFilters,
  VolumeDeleteQuery,
  VolumeDeleteRequest,
  VolumeListQuery,
  VolumeListResponse,
  VolumeQuery,
  VolumeSearchResponse,
} from "../../sdk/schemas";
import { badRequest } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";
import type { VolumeRecord } from "../domain/records";
import { requireNetworkVolumes, VOLUME_OFFER_FIELDS } from "../domain/volumes";
import { accepting, optionalField } from "./accepting";
import { route } from "./routes";
import { volumeView } from "./views/volumes";

const queryFields = { ...typedFilters(VOLUME_OFFER_FIELDS), order: optionalField(orderOf(VOLUME_OFFER_FIELDS)) };

/**
 * A volume offer search as the service takes it: the spec's `{"q": {...}}`, or (as the public Python client
 * sends it) the same filters at the top level of the body, without `q`.
 */
export const AcceptedVolumeSearch = z.union([
  z.object({ q: accepting(VolumeQuery, { fields: queryFields }) }),
  accepting(VolumeQuery, { fields: { ...queryFields, q: z.null().optional() } }),
]);

/** The filters of either form. */
const filtersOf = (body: z.infer<typeof AcceptedVolumeSearch>): VolumeQuery => ("q" in body && body.q ? body.q : body) as VolumeQuery;

/** Volume offer searches (network and local), volume rental (network and local), and the caller's volumes. */
export function registerVolumes(app: FastifyInstance, market: Marketplace): void {
  const { volumes } = market;

  route(app, market, {
    method: "POST",
    url: "/api/v0/network_volumes/search/",
    permission: "misc",
    rateLimit: "network_volume_search",
    readOnly: true,
    refusals: ["forbidden"],
    body: AcceptedVolumeSearch,
    response: VolumeSearchResponse,
    handler: ({ principal, body }) => {
      requireNetworkVolumes(principal.user);
      return { success: true, offers: volumes.searchNetworkOffers(filtersOf(body)) };
    },
  });

  route(app, market, {
    method: "POST",
    url: "/api/v0/volumes/search/",
    permission: "misc",
    readOnly: true,
    body: AcceptedVolumeSearch,
    response: VolumeSearchResponse,
    handler: ({ body }) => ({ success: true, offers: volumes.searchLocalOffers(filtersOf(body)) }),
  });

  // Renting a network volume answers its name and size, not its id (the vendor's description): clients find it
  // by listing their volumes. A local volume's answer carries its id as well (a Terraform provider reads it).
  route(app, market, {
    method: "PUT",
    url: "/api/v0/network_volumes/",
    permission: "instance_write",
    refusals: ["not_found", "forbidden"],
    rules: "invalid_size for a size larger than the space left on the offer",
    body: CreateNetworkVolumeRequest,
    response: CreateNetworkVolumeResponse,
    handler: ({ principal, body }) => {
      requireNetworkVolumes(principal.user);
      const volume = volumes.createNetwork(principal.user.id, body.id, body.size, body.name);
      return { success: true, volume_name: volume.name, volume_size: volume.size };
    },
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/volumes/",
    permission: "instance_write",
    refusals: ["not_found"],
    rules: "invalid_size for a size larger than the machine's disk",
    body: CreateNetworkVolumeRequest,
    response: CreateNetworkVolumeResponse,
    handler: ({ principal, body }) => {
      const volume = volumes.createLocal(principal.user.id, body.id, body.size, body.name);
      return { success: true, volume_name: volume.name, volume_size: volume.size, id: volume.id };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/volumes/",
    permission: "instance_read",
    query: VolumeListQuery,
    response: VolumeListResponse,
    handler: ({ principal, query }) => {
      const machineOf = (v: VolumeRecord) => (v.type === "local_volume" ? market.market.offer(v.askId) : undefined);
      return { volumes: volumes.list(principal.user.id, query.type).map((v) => volumeView(v, machineOf(v))) };
    },
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/volumes/",
    permission: "instance_write",
    refusals: ["not_found"],
    rules: "volume_in_use while an instance uses the volume",
    query: VolumeDeleteQuery,
    body: VolumeDeleteRequest,
    response: SuccessResponse,
    handler: ({ principal, query, body }) => {
      volumes.remove(principal.user.id, volumeIdOf(body.id, query.id));
      return { success: true };
    },
  });
}

/** The volume a deletion names: in its body (the vendor's description) or its query (the public client), the same if both. */
function volumeIdOf(inBody: number | undefined, inQuery: number | undefined): number {
  if (inBody === undefined && inQuery === undefined) throw badRequest("invalid_args", "Please provide a valid volume ID.");
  if (inBody !== undefined && inQuery !== undefined && inBody !== inQuery) {
    throw badRequest("invalid_args", `The body names volume ${inBody} and the query volume ${inQuery}: name one volume.`);
  }
  return (inBody ?? inQuery)!;
}
