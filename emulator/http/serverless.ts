import { FastifyInstance } from "fastify";
import {
  CreateEndpointRequest, CreateEndpointResponse, CreateWorkerGroupRequest, CreateWorkerGroupResponse, DeleteServerlessResponse, EndpointListResponse,
  EndpointResponse, SuccessResponse, UpdateEndpointRequest, UpdateWorkerGroupRequest, WorkerGroupListResponse,
} from "../../sdk/schemas";
import { parseSearchParams } from "../../sdk/search-params";
import { Marketplace } from "../domain/marketplace";
import type { EndpointRecord, WorkerGroupRecord, WorkerRecord } from "../domain/records";
import { idParam, route } from "./routes";

/** An endpoint as the listing shows it (the vendor's fields; `created_at` its date-time). */
export const endpointView = (e: EndpointRecord) => ({
  id: e.id,
  endpoint_name: e.name,
  min_load: e.minLoad,
  min_cold_load: e.minColdLoad,
  target_util: e.targetUtil,
  cold_mult: e.coldMult,
  cold_workers: e.coldWorkers,
  max_workers: e.maxWorkers,
  max_queue_time: e.maxQueueTime,
  target_queue_time: e.targetQueueTime,
  inactivity_timeout: e.inactivityTimeout,
  endpoint_state: e.state,
  api_key: e.apiKey,
  user_id: e.ownerId,
  created_at: new Date(e.createdAt).toISOString(),
});

const groupView = (market: Marketplace, g: WorkerGroupRecord) => {
  const endpoint = market.serverless.allEndpoints().find((e) => e.id === g.endpointId);
  return {
    id: g.id,
    endpoint_id: g.endpointId,
    endpoint_name: endpoint?.name ?? null,
    template_hash: g.templateHash,
    template_id: g.templateId,
    search_params: g.searchParams,
    search_query: parseSearchParams(g.searchParams),
    launch_args: g.launchArgs,
    gpu_ram: g.gpuRam,
    test_workers: g.testWorkers,
    cold_workers: g.coldWorkers,
    // The scaling targets the vendor lists on a group too: its endpoint's, unless the group was given its own.
    min_load: endpoint?.minLoad ?? null,
    target_util: endpoint?.targetUtil ?? null,
    cold_mult: endpoint?.coldMult ?? null,
    ...g.extra,
    api_key: endpoint?.apiKey,
    user_id: g.ownerId,
    created_at: new Date(g.createdAt).toISOString(),
  };
};

/** The bounds hold for a number sent as decimal text too (`"0.95"`), which the document shows as a plain pattern. */
const TARGET_RULES = "target_util is a fraction in (0, 1], also when sent as decimal text";
const ENDPOINT_RULES = "an endpoint of another account, or none, is `invalid_args` (the vendor's answers)";
const GROUP_RULES =
  "a group belongs to an endpoint of the account (endpoint_id or endpoint_name) and runs a template it can see (template_hash or template_id); " +
  "search_params are the CLI's criteria text (invalid_args otherwise); a template that does not exist is 404 `no_such_template`";

/**
 * Endpoints (`/api/v0/endptjobs/`) and worker groups (`/api/v0/workergroups/`, and `/api/v0/autojobs/` as the
 * public client 1.9.1 calls them). Deleting either destroys its workers and answers their instances.
 */
export function registerServerless(app: FastifyInstance, market: Marketplace): void {
  const { serverless } = market;

  route(app, market, {
    method: "POST", url: "/api/v0/endptjobs/", permission: "misc", body: CreateEndpointRequest, response: CreateEndpointResponse, rules: TARGET_RULES,
    handler: ({ principal, body }) => ({ success: true, result: serverless.createEndpoint(principal.user.id, body).id }),
  });
  route(app, market, {
    method: "GET", url: "/api/v0/endptjobs/", permission: "misc", response: EndpointListResponse,
    handler: ({ principal }) => ({ success: true, results: serverless.endpointsOf(principal.user.id).map(endpointView) }),
  });
  route(app, market, {
    method: "GET", url: "/api/v0/endptjobs/:id/", permission: "misc", response: EndpointResponse, rules: ENDPOINT_RULES,
    handler: ({ principal, params }) => ({ success: true, result: endpointView(serverless.endpoint(principal.user.id, idParam(params, "id"))) }),
  });
  route(app, market, {
    method: "PUT", url: "/api/v0/endptjobs/:id/", permission: "misc", body: UpdateEndpointRequest, response: SuccessResponse, rules: `${ENDPOINT_RULES}; ${TARGET_RULES}`,
    handler: ({ principal, params, body }) => {
      serverless.updateEndpoint(principal.user.id, idParam(params, "id"), body);
      market.autoscaler.tick();
      return { success: true };
    },
  });
  route(app, market, {
    method: "DELETE", url: "/api/v0/endptjobs/:id/", permission: "misc", response: DeleteServerlessResponse, rules: ENDPOINT_RULES,
    handler: ({ principal, params }) => {
      const id = idParam(params, "id");
      const workers = serverless.deleteEndpoint(principal.user.id, id);
      market.router.forget({ endpointId: id });
      return destroyed(market, workers, `Endpoint ${id} deleted`);
    },
  });

  for (const base of ["/api/v0/workergroups/", "/api/v0/autojobs/"]) {
    route(app, market, {
      method: "POST", url: base, permission: "misc", body: CreateWorkerGroupRequest, response: CreateWorkerGroupResponse, rules: GROUP_RULES, refusals: ["not_found"],
      handler: ({ principal, body }) => {
        const group = serverless.createGroup(principal.user.id, body);
        market.autoscaler.tick();
        return { success: true, id: group.id };
      },
    });
    route(app, market, {
      method: "GET", url: base, permission: "misc", response: WorkerGroupListResponse,
      handler: ({ principal }) => ({ success: true, results: serverless.groupsOfOwner(principal.user.id).map((g) => groupView(market, g)) }),
    });
    route(app, market, {
      method: "PUT", url: `${base}:id/`, permission: "misc", body: UpdateWorkerGroupRequest, response: SuccessResponse, rules: GROUP_RULES, refusals: ["not_found"],
      handler: ({ principal, params, body }) => {
        serverless.updateGroup(principal.user.id, idParam(params, "id"), body);
        market.autoscaler.tick();
        return { success: true };
      },
    });
    route(app, market, {
      method: "DELETE", url: `${base}:id/`, permission: "misc", refusals: ["not_found"], response: DeleteServerlessResponse,
      handler: ({ principal, params }) => {
        const id = idParam(params, "id");
        return destroyed(market, serverless.deleteGroup(principal.user.id, id), `Worker group ${id} deleted`);
      },
    });
  }
}

/** Destroys what was a deleted endpoint's or group's workers; answers which went. */
function destroyed(market: Marketplace, workers: WorkerRecord[], msg: string) {
  const deleted: number[] = [];
  for (const worker of workers) {
    const instance = market.instances.byId(worker.instanceId);
    market.router.forget({ workerId: worker.instanceId });
    if (instance) market.instances.destroy(instance);
    deleted.push(worker.instanceId);
  }
  return { success: true, deleted_workers: deleted, failed_workers: [], msg };
}
