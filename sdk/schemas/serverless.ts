import { z } from "zod";

/**
 * Serverless inference (docs/service-facts.md#serverless): an endpoint holds the scaling targets, its worker groups
 * say what a worker is (a template and offer criteria), and the service's autoscaler rents and retires the workers.
 * Endpoints live at `/api/v0/endptjobs/`; worker groups at `/api/v0/workergroups/` (the vendor's description) and
 * `/api/v0/autojobs/` (what the public client 1.9.1 calls), the same resource either way.
 */

/** What an endpoint's state may be set to; a deleted endpoint is gone. */
export const ENDPOINT_STATES = ["active", "suspended", "stopped"] as const;

// eslint-disable-next-line no-control-regex
const Name = z.string().min(1).max(128).regex(/^[^\u0000-\u001f\u007f]*$/, "a name has no control characters");

const SHARE = "a share of active capacity, in (0, 1]: 0.9 leaves 11% headroom";

/** The scaling targets, each optional: a creation takes the defaults for those not given, a change keeps them. */
export const EndpointTargets = z.object({
  endpoint_name: Name.optional(),
  /** The floor of active capacity, in load units per second. */
  min_load: z.number().min(0).optional(),
  /** The floor of total (active and inactive) capacity, without `cold_mult`. */
  min_cold_load: z.number().min(0).optional(),
  /** The share of active capacity that load should use: 0.9 leaves 11% headroom. */
  target_util: z.number().gt(0, SHARE).max(1, SHARE).optional(),
  /** Total capacity as a multiple of active load. */
  cold_mult: z.number().min(0).optional(),
  /** Workers kept with the model loaded, active or inactive. */
  cold_workers: z.number().int().min(0).max(1000).optional(),
  /** The cap on all workers. */
  max_workers: z.number().int().min(0).max(1000).optional(),
  /** Seconds a request may wait at one worker before the router passes it over. */
  max_queue_time: z.number().min(0).optional(),
  /** Seconds of endpoint-wide queueing above which the autoscaler scales up hard. */
  target_queue_time: z.number().min(0).optional(),
  /** Seconds of no requests before the endpoint may scale to zero; 0 at once, negative never. */
  inactivity_timeout: z.number().optional(),
});

/**
 * What a creation takes for a target not given. Where the sources differ, the public client's, which the vendor's
 * description shares but for min_load (10 there): emulator/SERVERLESS.md says so.
 */
export const ENDPOINT_DEFAULTS = {
  min_load: 0, min_cold_load: 0, target_util: 0.9, cold_mult: 2.5, cold_workers: 5, max_workers: 20, max_queue_time: 30, target_queue_time: 10,
} as const;

export const CreateEndpointRequest = EndpointTargets;
export type CreateEndpointRequest = z.infer<typeof CreateEndpointRequest>;
export const UpdateEndpointRequest = EndpointTargets.extend({ endpoint_state: z.enum(ENDPOINT_STATES).optional() });
export type UpdateEndpointRequest = z.infer<typeof UpdateEndpointRequest>;

/** An endpoint as the listing shows it. `api_key` is the endpoint's own key, which `/route/` takes. */
export const Endpoint = z.looseObject({
  id: z.number().int(),
  endpoint_name: z.string(),
  min_load: z.number().nullable().optional(),
  min_cold_load: z.number().nullable().optional(),
  target_util: z.number().nullable().optional(),
  cold_mult: z.number().nullable().optional(),
  cold_workers: z.number().int().nullable().optional(),
  max_workers: z.number().int().nullable().optional(),
  max_queue_time: z.number().nullable().optional(),
  target_queue_time: z.number().nullable().optional(),
  inactivity_timeout: z.number().nullable().optional(),
  endpoint_state: z.string().optional(),
  api_key: z.string().optional(),
  user_id: z.number().int().optional(),
  /** A date-time in the vendor's description, a float in its Python SDK: either is read. */
  created_at: z.union([z.string(), z.number()]).optional(),
});
export type Endpoint = z.infer<typeof Endpoint>;

export const CreateEndpointResponse = z.looseObject({ success: z.boolean().optional(), result: z.number().int() });
export const EndpointListResponse = z.looseObject({ success: z.boolean().optional(), results: z.array(Endpoint).default([]) });
export const EndpointResponse = z.looseObject({ success: z.boolean().optional(), result: Endpoint });
/** A deletion's answer: the workers (instance ids) destroyed with it, and those that could not be. */
export const DeleteServerlessResponse = z.looseObject({
  success: z.boolean(),
  deleted_workers: z.array(z.number().int()).default([]),
  failed_workers: z.array(z.number().int()).default([]),
  msg: z.string().optional(),
});

/** A worker group: what its workers run (a template, by hash or id) and where (offer criteria as the CLI writes them). */
export const WorkerGroupFields = z.object({
  template_hash: z.string().min(1).max(128).optional(),
  template_id: z.number().int().positive().optional(),
  /** Offer criteria in the CLI's query text: `gpu_name=RTX_4090 num_gpus>=1 verified=True`. */
  search_params: z.string().max(4096).optional(),
  /** Extra arguments of the workers' creation, as the CLI's launch arguments. */
  launch_args: z.string().max(4096).optional(),
  /** The least GPU memory of a worker, GB. */
  gpu_ram: z.number().min(0).optional(),
  /** Workers created to measure performance while the group starts (shown; the emulator does not benchmark). */
  test_workers: z.number().int().min(0).max(100).optional(),
  cold_workers: z.number().int().min(0).max(1000).optional(),
  endpoint_id: z.number().int().positive().optional(),
  endpoint_name: Name.optional(),
  /** Taken and shown; the vendor's docs say they are not used at the worker-group level. */
  min_load: z.number().min(0).optional(),
  target_util: z.number().gt(0).max(1).optional(),
  cold_mult: z.number().min(0).optional(),
  max_workers: z.number().int().min(0).max(1000).optional(),
});
export const CreateWorkerGroupRequest = WorkerGroupFields;
export type CreateWorkerGroupRequest = z.infer<typeof CreateWorkerGroupRequest>;
export const UpdateWorkerGroupRequest = WorkerGroupFields;
export type UpdateWorkerGroupRequest = z.infer<typeof UpdateWorkerGroupRequest>;

export const WorkerGroup = z.looseObject({
  id: z.number().int(),
  endpoint_id: z.number().int().nullable().optional(),
  endpoint_name: z.string().nullable().optional(),
  template_hash: z.string().nullable().optional(),
  template_id: z.number().int().nullable().optional(),
  search_params: z.string().nullable().optional(),
  /**
   * The criteria parsed, as the vendor's listing declares them (an object), or as its example shows them: the
   * criteria's text (docs/service-facts.md#serverless).
   */
  search_query: z.union([z.record(z.string(), z.unknown()), z.string()]).nullable().optional(),
  launch_args: z.string().nullable().optional(),
  gpu_ram: z.number().nullable().optional(),
  test_workers: z.number().int().nullable().optional(),
  cold_workers: z.number().int().nullable().optional(),
  min_load: z.number().nullable().optional(),
  target_util: z.number().nullable().optional(),
  cold_mult: z.number().nullable().optional(),
  max_workers: z.number().int().nullable().optional(),
  api_key: z.string().optional(),
  user_id: z.number().int().optional(),
  created_at: z.union([z.string(), z.number()]).optional(),
});
export type WorkerGroup = z.infer<typeof WorkerGroup>;

export const CreateWorkerGroupResponse = z.looseObject({ success: z.boolean().optional(), id: z.number().int() });
export const WorkerGroupListResponse = z.looseObject({ success: z.boolean().optional(), results: z.array(WorkerGroup).default([]) });

// The autoscaler host's calls (`/route/`, `/get_endpoint_workers/`, ...), made on the autoscaler's URL.

/** Where a worker's states come from: the vendor's worker states, by the names its console shows. */
export const WORKER_STATES = ["creating", "loading", "ready", "inactive", "updating", "error", "destroying"] as const;
export type WorkerState = (typeof WORKER_STATES)[number];

export const RouteRequest = z.object({
  /** The endpoint's name. */
  endpoint: Name,
  /** The endpoint's key (or a Bearer header, or `api_key` in the query). */
  api_key: z.string().max(256).optional(),
  /** The request's load: tokens, images, whatever unit the endpoint's workers measure. */
  cost: z.number().min(0).max(1e9).optional(),
  /** Sent again when asking anew for the same request, so it keeps its place. */
  request_idx: z.number().int().min(0).optional(),
  replay_timeout: z.number().optional(),
});
export type RouteRequest = z.infer<typeof RouteRequest>;

/** `/route/`: a ready worker's URL and the signature it checks, or, with none ready, the workers by state. */
export const RouteResponse = z.looseObject({
  endpoint: z.string(),
  url: z.string().optional(),
  cost: z.number().optional(),
  reqnum: z.number().int().optional(),
  signature: z.string().optional(),
  request_idx: z.number().int().optional(),
  status: z.string().optional(),
  __request_id: z.string().optional(),
});
export type RouteResponse = z.infer<typeof RouteResponse>;

/** What a routed request carries to its worker beside its payload: the route's answer, signed. */
export const RouteAuthData = z.looseObject({
  cost: z.number(),
  endpoint: z.string(),
  reqnum: z.number().int(),
  request_idx: z.number().int().optional(),
  signature: z.string(),
  url: z.string(),
});
export type RouteAuthData = z.infer<typeof RouteAuthData>;

/** `{id}` of an endpoint or a worker group, and how much of its log (`tail` lines). */
export const AutoscalerIdRequest = z.object({ id: z.number().int().positive(), api_key: z.string().max(256).optional(), tail: z.number().int().min(0).max(100000).optional() });
/**
 * An endpoint's log: the vendor's description names the endpoint by its name (`endpoint`), the service's public
 * client by its `id`; the live service takes either, and the SDK sends both (docs/service-facts.md#serverless).
 */
export const EndpointLogsRequest = AutoscalerIdRequest.extend({ endpoint: z.string().min(1) });

export const EndpointWorker = z.looseObject({
  /** The worker's instance. */
  id: z.number().int(),
  status: z.string(),
  url: z.string().nullable().optional(),
  worker_group_id: z.number().int().optional(),
  cur_load: z.number().optional(),
  reqs_working: z.number().int().optional(),
  perf: z.number().optional(),
  measured_perf: z.number().optional(),
  gpu_name: z.string().optional(),
  dph_total: z.number().optional(),
  started_at: z.number().nullable().optional(),
  loaded_at: z.number().nullable().optional(),
});
export type EndpointWorker = z.infer<typeof EndpointWorker>;
/**
 * An endpoint's workers: a bare list (what the vendor's Python SDK reads), or `{workers: [...]}` (the vendor's
 * description); the public client takes either (docs/service-facts.md#serverless). Read them with workersOf.
 */
export const EndpointWorkersResponse = z.union([z.array(EndpointWorker), z.looseObject({ workers: z.array(EndpointWorker) })]);
export type EndpointWorkersResponse = z.infer<typeof EndpointWorkersResponse>;

/** The workers of either form of the answer. */
export function workersOf(answer: EndpointWorkersResponse): EndpointWorker[] {
  return Array.isArray(answer) ? answer : answer.workers;
}
/** `POST /get_workergroup_workers/`: the description's `{workers}`. */
export const WorkerGroupWorkersResponse = z.looseObject({ workers: z.array(EndpointWorker) });

/** A log answer: the whole text (`logs`), and the same by the level keys the public client prints. */
export const LogsResponse = z.looseObject({ logs: z.string(), info0: z.string().optional(), info1: z.string().optional(), trace: z.string().optional(), debug: z.string().optional() });

/** A worker's report of its load (`/worker_status/`), keyed by its instance (`id`, its `CONTAINER_ID`). */
export const WorkerStatusRequest = z.object({
  id: z.number().int().positive(),
  /** The worker's key: its `CONTAINER_API_KEY`. */
  mtoken: z.string().max(256).optional(),
  cur_load: z.number().min(0).optional(),
  loadtime: z.number().min(0).optional(),
  error_msg: z.string().max(4096).optional(),
  num_requests_working: z.number().int().min(0).optional(),
  url: z.string().max(2048).optional(),
});
export type WorkerStatusRequest = z.infer<typeof WorkerStatusRequest>;

/** A worker's report of requests it finished (`/delete_requests/`): their load leaves it. */
export const DeleteRequestsRequest = z.object({
  worker_id: z.number().int().positive(),
  mtoken: z.string().max(256).optional(),
  requests: z.array(z.object({ request_idx: z.number().int().min(0), success: z.boolean().optional() })).max(10000),
});

/** `/update_workers/`: start (or cancel) a rolling update of a worker group's workers. */
export const UpdateWorkersRequest = z.object({ workergroup_id: z.number().int().positive(), api_key: z.string().max(256).optional(), cancel_update: z.boolean().optional() });
export const UpdateWorkersResponse = z.looseObject({ success: z.boolean(), cancelled: z.boolean().optional(), workers_to_update: z.number().int().optional(), error_msg: z.string().optional() });
