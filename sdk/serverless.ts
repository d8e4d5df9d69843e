import { z } from "zod";
import type { Caller } from "./call";
import { BadRequestError, NotFoundError } from "./errors";
import {
  AutoscalerIdRequest, CreateEndpointRequest, EndpointLogsRequest, CreateEndpointResponse, CreateWorkerGroupRequest, CreateWorkerGroupResponse, DeleteServerlessResponse, Endpoint,
  EndpointListResponse, EndpointWorker, EndpointWorkersResponse, LogsResponse, WorkerGroupWorkersResponse, SuccessResponse, UpdateEndpointRequest, UpdateWorkerGroupRequest,
  UpdateWorkersResponse, WorkerGroup, WorkerGroupListResponse, workersOf,
} from "./schemas";

/** What a deletion destroyed: the workers' instances, and those it could not. */
export type DeletedWorkers = z.infer<typeof DeleteServerlessResponse>;

/**
 * A change or deletion of something gone: the service answers 400 `invalid_args` ("... not found for user") for an
 * endpoint, 404 for a worker group. Both read as null here, as `get` of a thing gone does.
 */
async function unlessGone<T>(change: () => Promise<T>): Promise<T | null> {
  try {
    return await change();
  } catch (error) {
    // Only the thing itself gone: a template that is gone (no_such_template) is the change's own refusal.
    const gone = (error instanceof NotFoundError && error.code === "no_such_workergroup") || (error instanceof BadRequestError && /not found for user/i.test(error.message));
    if (gone) return null;
    throw error;
  }
}

/** `client.endpoints`: serverless endpoints, their scaling targets, and what the autoscaler says of them. */
export function endpointsApi(client: Caller) {
  const path = (id: number) => `/api/v0/endptjobs/${id}/`;
  const list = async (): Promise<Endpoint[]> => (await client.call({ method: "GET", path: "/api/v0/endptjobs/", schema: EndpointListResponse })).results;
  return {
    list,
    get: async (id: number): Promise<Endpoint | null> => (await list()).find((e) => e.id === id) ?? null,
    /** Creates it with the targets given (the service's defaults for the rest); answers it as listed, with its own `api_key`. */
    create: async (targets: CreateEndpointRequest): Promise<Endpoint> => {
      const made = await client.call({ method: "POST", path: "/api/v0/endptjobs/", body: CreateEndpointRequest.parse(targets), schema: CreateEndpointResponse });
      const endpoint = (await list()).find((e) => e.id === made.result);
      if (!endpoint) throw new NotFoundError(`Endpoint ${made.result} was created but is not listed: list the endpoints again.`);
      return endpoint;
    },
    /** Changes the targets given in place; null when the endpoint is gone. */
    update: async (id: number, change: UpdateEndpointRequest): Promise<true | null> =>
      unlessGone(async () => (await client.call({ method: "PUT", path: path(id), body: UpdateEndpointRequest.parse(change), schema: SuccessResponse, idempotent: true }), true as const)),
    /** Deletes it with its worker groups; their workers are destroyed. Null when it was gone already. */
    delete: async (id: number): Promise<DeletedWorkers | null> =>
      unlessGone(() => client.call({ method: "DELETE", path: path(id), schema: DeleteServerlessResponse, idempotent: true })),
    /** Its workers as the autoscaler sees them (state, URL, load). */
    workers: async (id: number): Promise<EndpointWorker[]> =>
      workersOf(await client.call({ method: "POST", path: "/get_endpoint_workers/", autoscaler: true, body: AutoscalerIdRequest.parse({ id }), schema: EndpointWorkersResponse, idempotent: true })),
    /** The autoscaler's log of it: the last `tail` lines. Named by its id and its name (the name read from the listing). */
    logs: async (id: number, tail?: number): Promise<string> => {
      const endpoint = (await list()).find((e) => e.id === id);
      if (!endpoint) throw new NotFoundError(`Endpoint ${id} is not among the account's endpoints: list them (client.endpoints.list()).`);
      const body = EndpointLogsRequest.parse({ id, endpoint: endpoint.endpoint_name, tail });
      return (await client.call({ method: "POST", path: "/get_endpoint_logs/", autoscaler: true, body, schema: LogsResponse, idempotent: true })).logs;
    },
  };
}

/** `client.workerGroups`: what an endpoint's workers run (a template) and where (offer criteria). */
export function workerGroupsApi(client: Caller) {
  const path = (id: number) => `/api/v0/workergroups/${id}/`;
  const list = async (): Promise<WorkerGroup[]> => (await client.call({ method: "GET", path: "/api/v0/workergroups/", schema: WorkerGroupListResponse })).results;
  return {
    list,
    get: async (id: number): Promise<WorkerGroup | null> => (await list()).find((g) => g.id === id) ?? null,
    create: async (group: CreateWorkerGroupRequest): Promise<WorkerGroup> => {
      const made = await client.call({ method: "POST", path: "/api/v0/workergroups/", body: CreateWorkerGroupRequest.parse(group), schema: CreateWorkerGroupResponse });
      const found = (await list()).find((g) => g.id === made.id);
      if (!found) throw new NotFoundError(`Worker group ${made.id} was created but is not listed: list the worker groups again.`);
      return found;
    },
    /** Changes what is given in place (a new template rolls the workers); null when the group is gone. */
    update: async (id: number, change: UpdateWorkerGroupRequest): Promise<true | null> =>
      unlessGone(async () => (await client.call({ method: "PUT", path: path(id), body: UpdateWorkerGroupRequest.parse(change), schema: SuccessResponse, idempotent: true }), true as const)),
    delete: async (id: number): Promise<DeletedWorkers | null> =>
      unlessGone(() => client.call({ method: "DELETE", path: path(id), schema: DeleteServerlessResponse, idempotent: true })),
    /** The group's workers as the autoscaler sees them (state, URL, load). */
    workers: async (id: number): Promise<EndpointWorker[]> =>
      (await client.call({ method: "POST", path: "/get_workergroup_workers/", autoscaler: true, body: AutoscalerIdRequest.parse({ id }), schema: WorkerGroupWorkersResponse, idempotent: true })).workers,
    logs: async (id: number, tail?: number): Promise<string> =>
      (await client.call({ method: "POST", path: "/get_workergroup_logs/", autoscaler: true, body: AutoscalerIdRequest.parse({ id, tail }), schema: LogsResponse, idempotent: true })).logs,
    /** Rolls every worker of the group onto what it runs now (or cancels a roll); answers how many roll. */
    rollWorkers: async (id: number, options: { cancel?: boolean } = {}): Promise<number> =>
      (await client.call({ method: "POST", path: "/update_workers/", autoscaler: true, body: { workergroup_id: id, cancel_update: options.cancel ?? false }, schema: UpdateWorkersResponse })).workers_to_update ?? 0,
  };
}
