import { FastifyInstance } from "fastify";
import {
  CreateInstanceRequest,
  CreateInstanceResponse,
  InstanceListResponse,
  InstanceResponse,
  SuccessResponse,
  UpdateInstanceRequest,
} from "../../sdk/schemas";
import { Principal } from "../domain/accounts";
import { forbidden, notFound } from "../domain/errors";
import { instanceView } from "../domain/instances";
import { Marketplace } from "../domain/marketplace";
import { idParam, route } from "./routes";

/** Instance creation (accepting an ask) and the instance endpoints. */
export function registerInstances(app: FastifyInstance, market: Marketplace): void {
  const view = (instance: Parameters<typeof instanceView>[0]) => instanceView(instance, market.clock.now(), market.lifecycle);
  /** The caller's instance; an instance API key reaches only its own. */
  const owned = (principal: Principal, id: number) => {
    const instance = market.instances.find(principal.user.id, id);
    if (!instance) throw notFound("no_such_instance", `Instance ${id} does not exist.`);
    if (principal.key.instanceId !== undefined && principal.key.instanceId !== id) {
      throw forbidden("permission_denied", "An instance API key may only start, stop or destroy its own instance.");
    }
    return instance;
  };

  route(app, market, {
    method: "PUT",
    url: "/api/v0/asks/:offer_id/",
    rateLimit: "instance_create",
    response: CreateInstanceResponse,
    permission: "instance_write",
    body: CreateInstanceRequest,
    handler: ({ principal, body, params }) => {
      const { instance, apiKey } = market.acceptOffer(principal, idParam(params, "offer_id"), body);
      return { success: true, new_contract: instance.id, instance_api_key: apiKey };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/instances/",
    response: InstanceListResponse,
    permission: "instance_read",
    handler: ({ principal }) => {
      const instances = market.instances.list(principal.user.id).map(view);
      return { instances_found: instances.length, instances };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/instances/:id/",
    response: InstanceResponse,
    permission: "instance_read",
    handler: ({ principal, params }) => {
      const instance = market.instances.find(principal.user.id, idParam(params, "id"));
      return { instances: instance ? view(instance) : null };
    },
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/instances/:id/",
    response: SuccessResponse,
    permission: "instance_write",
    instanceKey: true,
    body: UpdateInstanceRequest,
    handler: ({ principal, params, body }) => {
      const instance = owned(principal, idParam(params, "id"));
      if (principal.key.instanceId !== undefined && body.label !== undefined) {
        throw forbidden("permission_denied", "An instance API key may start or stop its instance, not relabel it.");
      }
      market.instances.update(instance, body);
      return { success: true };
    },
  });

  route(app, market, {
    method: "DELETE",
    url: "/api/v0/instances/:id/",
    response: SuccessResponse,
    permission: "instance_write",
    instanceKey: true,
    handler: ({ principal, params }) => {
      market.instances.destroy(owned(principal, idParam(params, "id")));
      return { success: true };
    },
  });
}
