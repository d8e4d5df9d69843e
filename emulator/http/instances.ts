import { FastifyInstance } from "fastify";
import { CreateInstanceRequest, UpdateInstanceRequest } from "../../sdk/schemas";
import { notFound } from "../domain/errors";
import { instanceView } from "../domain/instances";
import { Marketplace } from "../domain/marketplace";
import { idParam, route } from "./routes";

/** Instance creation (accepting an ask) and the instance endpoints. */
export function registerInstances(app: FastifyInstance, market: Marketplace): void {
  const view = (instance: Parameters<typeof instanceView>[0]) => instanceView(instance, market.clock.now(), market.lifecycle);
  const owned = (ownerId: number, id: number) => {
    const instance = market.instances.find(ownerId, id);
    if (!instance) throw notFound("no_such_instance", `Instance ${id} does not exist.`);
    return instance;
  };

  route(app, market, {
    method: "PUT",
    url: "/api/v0/asks/:offer_id/",
    body: CreateInstanceRequest,
    handler: ({ principal, body, params }) => {
      const { instance, apiKey } = market.acceptOffer(principal, idParam(params, "offer_id"), body);
      return { success: true, new_contract: instance.id, instance_api_key: apiKey };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/instances/",
    handler: ({ principal }) => {
      const instances = market.instances.list(principal.user.id).map(view);
      return { instances_found: instances.length, instances };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/instances/:id/",
    handler: ({ principal, params }) => {
      const instance = market.instances.find(principal.user.id, idParam(params, "id"));
      return { instances: instance ? view(instance) : null };
    },
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/instances/:id/",
    body: UpdateInstanceRequest,
    handler: ({ principal, params, body }) => {
      market.instances.update(owned(principal.user.id, idParam(params, "id")), body);
      return { success: true };
    },
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/instances/:id/",
    handler: ({ principal, params }) => {
      market.instances.destroy(owned(principal.user.id, idParam(params, "id")));
      return { success: true };
    },
  });
}
