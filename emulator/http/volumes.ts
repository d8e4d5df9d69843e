import { FastifyInstance } from "fastify";
import {
  CreateNetworkVolumeRequest,
  CreateNetworkVolumeResponse,
  SuccessResponse,
  VolumeDeleteQuery,
  VolumeListQuery,
  VolumeListResponse,
  VolumeSearchRequest,
  VolumeSearchResponse,
} from "../../sdk/schemas";
import { Marketplace } from "../domain/marketplace";
import { route } from "./routes";

/** Volume offer searches (network and local), network volume creation, and the caller's volumes. */
export function registerVolumes(app: FastifyInstance, market: Marketplace): void {
  const { volumes } = market;

  route(app, market, {
    method: "POST",
    url: "/api/v0/network_volumes/search/",
    permission: "misc",
    rateLimit: "network_volume_search",
    readOnly: true,
    body: VolumeSearchRequest,
    response: VolumeSearchResponse,
    handler: ({ body }) => ({ success: true, offers: volumes.searchNetworkOffers(body.q) }),
  });

  route(app, market, {
    method: "POST",
    url: "/api/v0/volumes/search/",
    permission: "misc",
    readOnly: true,
    body: VolumeSearchRequest,
    response: VolumeSearchResponse,
    handler: ({ body }) => ({ success: true, offers: volumes.searchLocalOffers(body.q) }),
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/network_volumes/",
    permission: "instance_write",
    body: CreateNetworkVolumeRequest,
    response: CreateNetworkVolumeResponse,
    handler: ({ principal, body }) => {
      const volume = volumes.createNetwork(principal.user.id, body.id, body.size, body.name);
      return { success: true, volume_id: volume.id, volume: volumes.view(volume) };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/volumes/",
    permission: "instance_read",
    query: VolumeListQuery,
    response: VolumeListResponse,
    handler: ({ principal, query }) => {
      return { volumes: volumes.list(principal.user.id, query.type).map((v) => volumes.view(v)) };
    },
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/volumes/",
    permission: "instance_write",
    query: VolumeDeleteQuery,
    response: SuccessResponse,
    handler: ({ principal, query }) => {
      volumes.remove(principal.user.id, query.id);
      return { success: true };
    },
  });
}
