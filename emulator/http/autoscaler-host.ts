import { timingSafeEqual } from "node:crypto";
import { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import {
  AutoscalerIdRequest, DeleteRequestsRequest, EndpointWorkersResponse, WorkerGroupWorkersResponse, LogsResponse, RouteRequest, RouteResponse, SuccessResponse, UpdateWorkersRequest,
  UpdateWorkersResponse, WorkerStatusRequest,
} from "../../sdk/schemas";
import { badRequest, unauthorized } from "../domain/errors";
import { Marketplace } from "../domain/marketplace";
import { DEFAULT_COST, WORKER_PERF } from "../domain/routing";
import type { EndpointRecord, WorkerRecord } from "../domain/records";
import { route } from "./routes";

/**
 * The autoscaler host's calls, on the emulator's own URL (the public client sends them to `--url` when it is not
 * the service's): routing, the routing key, workers and logs of an endpoint, and the workers' own reports. They take
 * the endpoint's key or its owner's (a Bearer header, `api_key` in the body or the query); a worker's reports take
 * its instance's key (`mtoken`, its `CONTAINER_API_KEY`): each checks the key it is given itself (`auth: "own"`).
 */
export function registerAutoscalerHost(app: FastifyInstance, market: Marketplace): void {
  const { serverless, router } = market;

  route(app, market, {
    // Read-only for a data dir: what it changes (the request's place, the endpoint's last request) need not be saved first.
    method: "POST", url: "/route/", auth: "own", permission: "misc", readOnly: true, body: RouteRequest, response: RouteResponse,
    rules: "the endpoint is named with its key or its owner's (401 otherwise)",
    handler: ({ body, reply }) => {
      const endpoint = endpointNamed(market, body.endpoint, keyOf(reply, body.api_key));
      const cost = body.cost ?? DEFAULT_COST;
      const decision = router.route(endpoint, cost, body.request_idx);
      if (!decision.routed) {
        // The demand is seen at once, not at the autoscaler's next look.
        market.settle();
        return { endpoint: endpoint.name, status: statusText(market, endpoint), request_idx: decision.requestIdx, __request_id: decision.requestId };
      }
      const { url, reqnum, signature, requestIdx, requestId } = decision;
      return { endpoint: endpoint.name, url, cost, reqnum, signature, request_idx: requestIdx, __request_id: requestId };
    },
  });

  app.get("/pubkey/", async (_request, reply) => reply.type("text/plain").send(router.publicKeyPem()));

  route(app, market, {
    method: "POST", url: "/get_endpoint_workers/", auth: "own", permission: "misc", readOnly: true, body: AutoscalerIdRequest, response: EndpointWorkersResponse,
    rules: "the endpoint is named with its key or its owner's (401 otherwise)",
    handler: ({ body, reply }) => {
      const endpoint = endpointById(market, body.id, keyOf(reply, body.api_key));
      market.settle();
      return serverless.workersOf({ endpointId: endpoint.id }).map((w) => workerView(market, w));
    },
  });

  // A worker group's workers (the vendor's description; no client command calls it): the description's `{workers}`.
  route(app, market, {
    method: "POST", url: "/get_workergroup_workers/", auth: "own", permission: "misc", readOnly: true, body: AutoscalerIdRequest, response: WorkerGroupWorkersResponse,
    rules: "the group is named with its endpoint's key or its owner's (401 otherwise)",
    handler: ({ body, reply }) => {
      const groupId = groupById(market, body.id, keyOf(reply, body.api_key));
      market.settle();
      const group = market.serverless.groupById(groupId)!;
      const workers = serverless.workersOf({ endpointId: group.endpointId }).filter((w) => w.groupId === groupId);
      return { workers: workers.map((w) => ({ ...workerView(market, w), created_at: new Date(market.instances.byId(w.instanceId)?.createdAt ?? 0).toISOString() })) };
    },
  });

  for (const url of ["/get_endpoint_logs/", "/get_autogroup_logs/", "/get_workergroup_logs/"]) {
    const ofEndpoint = url === "/get_endpoint_logs/";
    route(app, market, {
      method: "POST", url, auth: "own", permission: "misc", readOnly: true, body: LogsRequest, response: LogsResponse,
      rules: "the endpoint (by id, or by name as the vendor's description has it) or group is named with its key or its owner's (401 otherwise)",
      handler: ({ body, reply }) => {
        const key = keyOf(reply, body.api_key);
        const endpointOf = () => (body.id !== undefined ? endpointById(market, body.id, key) : endpointNamed(market, body.endpoint!, key));
        if (!ofEndpoint && body.id === undefined) throw badRequest("invalid_args", "A worker group's log is asked for by its id.");
        const text = ofEndpoint ? market.serverlessLogs.text({ endpointId: endpointOf().id }, body.tail) : market.serverlessLogs.text({ groupId: groupById(market, body.id!, key) }, body.tail);
        // One log at every level: the emulator's lines are all of one kind.
        return { logs: text, info0: text, info1: text, trace: text, debug: text };
      },
    });
  }

  route(app, market, {
    method: "POST", url: "/update_workers/", auth: "own", permission: "misc", body: UpdateWorkersRequest, response: UpdateWorkersResponse,
    rules: "the group is named with an account key of its owner (401 otherwise)",
    handler: ({ body, reply }) => {
      const groupId = groupById(market, body.workergroup_id, keyOf(reply, body.api_key), { accountKeyOnly: true });
      const owner = serverless.groupById(groupId)!.ownerId;
      const rolled = serverless.rollGroup(owner, groupId, body.cancel_update ?? false);
      market.autoscaler.tick();
      return { success: true, cancelled: body.cancel_update ?? false, workers_to_update: rolled };
    },
  });

  route(app, market, {
    method: "POST", url: "/worker_status/", auth: "own", permission: "misc", body: WorkerStatusRequest, response: SuccessResponse,
    rules: "a worker reports with its instance's key (mtoken)",
    handler: ({ body, reply }) => {
      const worker = reportingWorker(market, body.id, keyOf(reply, body.mtoken));
      if (body.cur_load !== undefined) worker.reportedLoad = body.cur_load;
      if (body.error_msg) worker.error = body.error_msg;
      // The vendor's worker reports a load time of 0 until its model is loaded.
      else if (body.loadtime !== undefined && body.loadtime > 0) market.autoscaler.loaded(worker.instanceId);
      // A deployment learns at once which version served or failed (before the autoscaler clears a failed worker).
      market.deployments.observe();
      return { success: true };
    },
  });

  route(app, market, {
    method: "POST", url: "/delete_requests/", auth: "own", permission: "misc", body: DeleteRequestsRequest, response: SuccessResponse,
    rules: "a worker reports with its instance's key (mtoken)",
    handler: ({ body, reply }) => {
      const worker = reportingWorker(market, body.worker_id, keyOf(reply, body.mtoken));
      router.done(worker.instanceId, body.requests.map((r) => r.request_idx));
      return { success: true };
    },
  });
}

/** A log's request: the endpoint or group by `id` (the public client), or an endpoint by name (`endpoint`, the vendor's description). */
const LogsRequest = AutoscalerIdRequest.partial({ id: true })
  .extend({ endpoint: z.string().min(1).max(128).optional() })
  .refine((body) => body.id !== undefined || body.endpoint !== undefined, { message: "name the endpoint: id, or endpoint (its name)", path: ["id"] });

/** The key a call presents: in its body, else a Bearer header, else `api_key` in the query. */
function keyOf(reply: FastifyReply, inBody: string | undefined): string | undefined {
  const request = reply.request;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "")?.[1];
  const query = (request.query as Record<string, unknown>).api_key;
  return inBody ?? bearer ?? (typeof query === "string" ? query : undefined);
}

/**
 * Whether `key` opens the endpoint: its own key (unless `accountKeyOnly`), or an account key of its owner that may
 * use the `misc` category (not an instance's key: code on an instance does not route or roll with it).
 */
function opens(market: Marketplace, endpoint: EndpointRecord, key: string | undefined, options: { accountKeyOnly?: boolean } = {}): boolean {
  if (!key) return false;
  if (!options.accountKeyOnly && sameKey(key, endpoint.apiKey)) return true;
  try {
    const principal = market.accounts.authenticate(key);
    if (principal.user.id !== endpoint.ownerId || principal.key.instanceId !== undefined) return false;
    market.accounts.authorize(principal, "misc", false);
    return true;
  } catch {
    return false;
  }
}

/** Compared in constant time: a key's bytes are not told by how long a refusal takes. */
function sameKey(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function endpointNamed(market: Marketplace, name: string, key: string | undefined): EndpointRecord {
  const named = market.serverless.endpointsNamed(name);
  if (!named.length) throw badRequest("invalid_args", `Invalid endpoint or missing required parameters: no endpoint is named ${JSON.stringify(name)}.`);
  const found = named.find((e) => opens(market, e, key));
  if (!found) throw unauthorized("auth_error", `invalid api_key or endpoint ${name} not found: send the endpoint's api_key (from the endpoint listing) or its owner's key.`);
  return found;
}

function endpointById(market: Marketplace, id: number, key: string | undefined): EndpointRecord {
  const found = market.serverless.allEndpoints().find((e) => e.id === id);
  if (!found || !opens(market, found, key)) throw unauthorized("auth_error", `invalid api_key or endpoint ${id} not found.`);
  return found;
}

/** The group's id, when `key` opens its endpoint. */
function groupById(market: Marketplace, id: number, key: string | undefined, options: { accountKeyOnly?: boolean } = {}): number {
  const group = market.serverless.groupById(id);
  const endpoint = group && market.serverless.allEndpoints().find((e) => e.id === group.endpointId);
  if (!endpoint || !opens(market, endpoint, key, options)) throw unauthorized("auth_error", `invalid api_key or worker group ${id} not found.`);
  return id;
}

/** The worker of instance `id`, when `key` is that instance's key (or its owner's). */
function reportingWorker(market: Marketplace, id: number, key: string | undefined): WorkerRecord {
  const worker = market.serverless.worker(id);
  let principal;
  try {
    principal = market.accounts.authenticate(key);
  } catch {
    principal = undefined;
  }
  const owner = market.instances.byId(id)?.ownerId;
  const allowed = principal && principal.user.id === owner && (principal.key.instanceId === undefined || principal.key.instanceId === id);
  if (!worker || !allowed) throw unauthorized("auth_error", `No worker ${id} reports with this key: send the worker's CONTAINER_API_KEY as mtoken.`);
  return worker;
}

/** The endpoint's workers by state, as `/route/` tells a client while none is ready. */
function statusText(market: Marketplace, endpoint: EndpointRecord): string {
  const counts = new Map<string, number>();
  for (const worker of market.serverless.workersOf({ endpointId: endpoint.id })) {
    const state = market.autoscaler.stateOf(worker);
    counts.set(state, (counts.get(state) ?? 0) + 1);
  }
  const parts = [...counts].map(([state, n]) => `${n} ${state}`);
  const none = market.serverless.groupsOf(endpoint.id).length ? "no workers: scaling up" : "no worker group: nothing to scale";
  return `No worker ready yet (${parts.length ? parts.join(", ") : none})`;
}

function workerView(market: Marketplace, worker: WorkerRecord) {
  const instance = market.instances.byId(worker.instanceId);
  const group = market.serverless.groupsOf(worker.endpointId).find((g) => g.id === worker.groupId);
  const state = market.autoscaler.stateOf(worker, group);
  return {
    id: worker.instanceId,
    status: state,
    url: state === "ready" || state === "updating" ? market.workerUrl(worker) : null,
    worker_group_id: worker.groupId,
    cur_load: market.router.workerLoad(worker),
    reqs_working: market.router.working(worker.instanceId),
    perf: WORKER_PERF,
    measured_perf: WORKER_PERF,
    gpu_name: instance?.offer.gpu_name,
    dph_total: instance?.pricePerHour,
    started_at: instance ? instance.bootStartedAt / 1000 : null,
    loaded_at: worker.loadedAt === undefined ? null : worker.loadedAt / 1000,
  };
}
