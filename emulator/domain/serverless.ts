import { randomBytes } from "node:crypto";
import { CreateEndpointRequest, CreateWorkerGroupRequest, ENDPOINT_DEFAULTS, UpdateEndpointRequest, UpdateWorkerGroupRequest } from "../../sdk/schemas";
import { parseSearchParams, SearchParamsError } from "../../sdk/search-params";
import { filterProblems } from "../../sdk/filter-check";
import { OFFER_FILTER_FIELDS } from "../../sdk/schemas";
import type { OfferFilters } from "../../sdk/offer-filters";
import { badRequest, notFound } from "./errors";
import type { Persistent } from "./persistence";
import { containerEnv } from "./instances";
import type { EndpointRecord, InstanceRecord, WorkerGroupRecord, WorkerRecord } from "./records";

/**
 * Serverless endpoints and their worker groups (emulator/SERVERLESS.md): the records and the rules of their
 * creation and change. Which workers run is the autoscaler's (./autoscaler.ts); routing is ./routing.ts.
 */


/** Seconds without requests before an endpoint whose `inactivity_timeout` is not set may scale down. */
export const DEFAULT_INACTIVITY_S = 300;
/** The CLI's own filter, which it adds to a group's criteria unless told not to. */
const CLI_DEFAULT_FILTER = "verified=True rentable=True rented=False";

export interface ServerlessSnapshot {
  endpoints: EndpointRecord[];
  groups: WorkerGroupRecord[];
  workers: WorkerRecord[];
  nextEndpointId: number;
  nextGroupId: number;
}

export interface ServerlessDeps {
  now(): number;
  /** The template a group names must exist and be visible to its owner: its hash (throws `no_such_template`). */
  templateHash(ownerId: number, by: { hash?: string; id?: number }): string;
}

export class Serverless implements Persistent<ServerlessSnapshot> {
  private endpoints = new Map<number, EndpointRecord>();
  private groups = new Map<number, WorkerGroupRecord>();
  private workers = new Map<number, WorkerRecord>();
  private nextEndpointId = 1001;
  private nextGroupId = 2001;

  constructor(private readonly deps: ServerlessDeps) {}

  // Endpoints

  endpointsOf(ownerId: number): EndpointRecord[] {
    return [...this.endpoints.values()].filter((e) => e.ownerId === ownerId);
  }

  allEndpoints(): EndpointRecord[] {
    return [...this.endpoints.values()];
  }

  endpoint(ownerId: number, id: number, missing = "Endpointgroup not found for user"): EndpointRecord {
    const found = this.endpoints.get(id);
    if (!found || found.ownerId !== ownerId) throw badRequest("invalid_args", `${missing}: no endpoint ${id} in this account. List them (GET /api/v0/endptjobs/).`);
    return found;
  }

  /** Endpoints by name: `/route/` finds its endpoint so, with the key that proves whose it is. */
  endpointsNamed(name: string): EndpointRecord[] {
    return [...this.endpoints.values()].filter((e) => e.name === name);
  }

  createEndpoint(ownerId: number, request: CreateEndpointRequest): EndpointRecord {
    const now = this.deps.now();
    const t = { ...ENDPOINT_DEFAULTS, ...request };
    const endpoint: EndpointRecord = {
      id: this.nextEndpointId++,
      ownerId,
      name: request.endpoint_name ?? `endpoint-${this.nextEndpointId - 1}`,
      minLoad: t.min_load, minColdLoad: t.min_cold_load, targetUtil: t.target_util, coldMult: t.cold_mult,
      coldWorkers: t.cold_workers, maxWorkers: t.max_workers, maxQueueTime: t.max_queue_time, targetQueueTime: t.target_queue_time,
      inactivityTimeout: request.inactivity_timeout ?? null,
      state: "active",
      apiKey: randomBytes(24).toString("hex"),
      createdAt: now,
      lastRequestAt: now,
      reqnum: 0,
    };
    this.endpoints.set(endpoint.id, endpoint);
    return endpoint;
  }

  /** Changes the targets given; the rest stay. */
  updateEndpoint(ownerId: number, id: number, change: UpdateEndpointRequest): EndpointRecord {
    const endpoint = this.endpoint(ownerId, id);
    const set = <K extends keyof EndpointRecord>(key: K, value: EndpointRecord[K] | undefined) => {
      if (value !== undefined) endpoint[key] = value;
    };
    set("name", change.endpoint_name);
    set("minLoad", change.min_load);
    set("minColdLoad", change.min_cold_load);
    set("targetUtil", change.target_util);
    set("coldMult", change.cold_mult);
    set("coldWorkers", change.cold_workers);
    set("maxWorkers", change.max_workers);
    set("maxQueueTime", change.max_queue_time);
    set("targetQueueTime", change.target_queue_time);
    set("inactivityTimeout", change.inactivity_timeout);
    set("state", change.endpoint_state);
    return endpoint;
  }

  /** Deletes the endpoint and its groups; answers the workers that were theirs, for the caller to destroy. */
  deleteEndpoint(ownerId: number, id: number): WorkerRecord[] {
    const endpoint = this.endpoint(ownerId, id, "Routegroup not found for user");
    const workers = this.workersOf({ endpointId: endpoint.id });
    for (const group of this.groupsOf(endpoint.id)) this.groups.delete(group.id);
    for (const worker of workers) this.workers.delete(worker.instanceId);
    this.endpoints.delete(endpoint.id);
    return workers;
  }

  // Worker groups

  groupsOfOwner(ownerId: number): WorkerGroupRecord[] {
    return [...this.groups.values()].filter((g) => g.ownerId === ownerId);
  }

  groupsOf(endpointId: number): WorkerGroupRecord[] {
    return [...this.groups.values()].filter((g) => g.endpointId === endpointId);
  }

  group(ownerId: number, id: number, missing = "Workgroup not found for user"): WorkerGroupRecord {
    const found = this.groups.get(id);
    if (!found || found.ownerId !== ownerId) throw badRequest("invalid_args", `${missing}: no worker group ${id} in this account. List them (GET /api/v0/workergroups/).`);
    return found;
  }

  /** The group of that id, whoever owns it (the autoscaler host's calls check the key themselves). */
  groupById(id: number): WorkerGroupRecord | undefined {
    return this.groups.get(id);
  }

  /** A group belongs to an endpoint named by id, or by name; it runs a template that exists. */
  createGroup(ownerId: number, request: CreateWorkerGroupRequest): WorkerGroupRecord {
    const endpoint = this.endpointFor(ownerId, request);
    if (request.template_hash === undefined && request.template_id === undefined) {
      throw badRequest("invalid_args", "A worker group runs a template: give template_hash or template_id.");
    }
    const group: WorkerGroupRecord = {
      id: this.nextGroupId++,
      ownerId,
      endpointId: endpoint.id,
      templateHash: this.deps.templateHash(ownerId, { hash: request.template_hash, id: request.template_id }),
      templateId: request.template_id ?? null,
      searchParams: checkedCriteria(request.search_params ?? CLI_DEFAULT_FILTER),
      launchArgs: request.launch_args ?? null,
      gpuRam: request.gpu_ram ?? 24,
      testWorkers: request.test_workers ?? 3,
      coldWorkers: request.cold_workers ?? null,
      extra: pickExtra(request),
      createdAt: this.deps.now(),
      version: 1,
    };
    this.groups.set(group.id, group);
    return group;
  }

  /** A deployment's group: its workers are made from the deployment (no template), on offers its criteria find. */
  createDeploymentGroup(ownerId: number, endpointId: number, deploymentId: number, searchParams: string): WorkerGroupRecord {
    const group: WorkerGroupRecord = {
      id: this.nextGroupId++, ownerId, endpointId, templateHash: null, templateId: null,
      searchParams: checkedCriteria(searchParams), launchArgs: null, gpuRam: 0, testWorkers: 0, coldWorkers: null,
      extra: {}, createdAt: this.deps.now(), version: 1, deploymentId,
    };
    this.groups.set(group.id, group);
    return group;
  }

  /** Changes what is given in place; a new template starts a rolling update of the group's workers. */
  updateGroup(ownerId: number, id: number, change: UpdateWorkerGroupRequest): WorkerGroupRecord {
    const group = this.group(ownerId, id);
    // Everything that can refuse the change first: a refused change changes nothing.
    if (change.endpoint_id !== undefined && change.endpoint_id !== group.endpointId) this.endpoint(ownerId, change.endpoint_id);
    const templated = change.template_hash !== undefined || change.template_id !== undefined;
    const hash = templated ? this.deps.templateHash(ownerId, { hash: change.template_hash, id: change.template_id }) : group.templateHash;
    const criteria = change.search_params !== undefined ? checkedCriteria(change.search_params) : group.searchParams;
    if (templated) {
      if (hash !== group.templateHash) group.version++;
      group.templateHash = hash;
      group.templateId = change.template_id ?? null;
    }
    group.searchParams = criteria;
    if (change.launch_args !== undefined) group.launchArgs = change.launch_args;
    if (change.gpu_ram !== undefined) group.gpuRam = change.gpu_ram;
    if (change.test_workers !== undefined) group.testWorkers = change.test_workers;
    if (change.cold_workers !== undefined) group.coldWorkers = change.cold_workers;
    if (change.endpoint_id !== undefined && change.endpoint_id !== group.endpointId) {
      // Its workers move with it: they serve the endpoint it now belongs to.
      group.endpointId = change.endpoint_id;
      for (const worker of this.workersOf({ groupId: group.id })) worker.endpointId = group.endpointId;
    }
    group.extra = { ...group.extra, ...pickExtra(change) };
    return group;
  }

  /** Starts a rolling update of every worker of the group (`/update_workers/`), or cancels one; answers how many roll. */
  rollGroup(ownerId: number, id: number, cancel: boolean): number {
    const group = this.group(ownerId, id);
    const workers = this.workersOf({ groupId: group.id });
    if (cancel) {
      for (const worker of workers) worker.version = group.version;
      return 0;
    }
    group.version++;
    return workers.length;
  }

  deleteGroup(ownerId: number, id: number): WorkerRecord[] {
    const group = this.groups.get(id);
    if (!group || group.ownerId !== ownerId) throw notFound("no_such_workergroup", `No worker group ${id} in this account. List them (GET /api/v0/workergroups/).`);
    const workers = this.workersOf({ groupId: group.id });
    for (const worker of workers) this.workers.delete(worker.instanceId);
    this.groups.delete(group.id);
    return workers;
  }

  /** The group's criteria as offer-search filters. */
  criteriaOf(group: WorkerGroupRecord): OfferFilters {
    return parseSearchParams(group.searchParams);
  }

  // Workers

  workersOf(by: { endpointId?: number; groupId?: number }): WorkerRecord[] {
    return [...this.workers.values()].filter((w) => (by.endpointId === undefined || w.endpointId === by.endpointId) && (by.groupId === undefined || w.groupId === by.groupId));
  }

  worker(instanceId: number): WorkerRecord | undefined {
    return this.workers.get(instanceId);
  }

  addWorker(group: WorkerGroupRecord, instanceId: number): WorkerRecord {
    const worker: WorkerRecord = { instanceId, groupId: group.id, endpointId: group.endpointId, version: group.version };
    this.workers.set(instanceId, worker);
    return worker;
  }

  removeWorker(instanceId: number): void {
    this.workers.delete(instanceId);
  }

  snapshot(): ServerlessSnapshot {
    const { nextEndpointId, nextGroupId } = this;
    return structuredClone({ endpoints: [...this.endpoints.values()], groups: [...this.groups.values()], workers: [...this.workers.values()], nextEndpointId, nextGroupId });
  }

  restore(data: ServerlessSnapshot): void {
    const copy = structuredClone(data);
    this.endpoints = new Map(copy.endpoints.map((e) => [e.id, e]));
    this.groups = new Map(copy.groups.map((g) => [g.id, g]));
    this.workers = new Map(copy.workers.map((w) => [w.instanceId, w]));
    this.nextEndpointId = copy.nextEndpointId;
    this.nextGroupId = copy.nextGroupId;
  }

  private endpointFor(ownerId: number, request: { endpoint_id?: number; endpoint_name?: string }): EndpointRecord {
    const mine = this.endpointsOf(ownerId);
    const found = request.endpoint_id !== undefined ? mine.find((e) => e.id === request.endpoint_id) : mine.find((e) => e.name === request.endpoint_name);
    if (!found) throw badRequest("invalid_args", "Please assign your workergroup to a valid endpoint identifier (endpoint_id, or endpoint_name of an endpoint of yours).");
    return found;
  }
}

/** The criteria text, refused (400) when it is not criteria of the offer search, or a value is of the wrong type. */
export function checkedCriteria(text: string): string {
  let filters: OfferFilters;
  try {
    filters = parseSearchParams(text);
  } catch (error) {
    if (error instanceof SearchParamsError) throw badRequest("invalid_args", error.message);
    throw error;
  }
  // The CLI's own filter names fields the search does not keep (`rented`): the market ignores those, as the service.
  const known = Object.fromEntries(Object.entries(filters).filter(([field]) => field in OFFER_FILTER_FIELDS));
  const [problem] = filterProblems(known, OFFER_FILTER_FIELDS);
  if (problem) throw badRequest("invalid_args", `search_params: ${problem.path.join(".")}: ${problem.message}`);
  return text.trim();
}

function pickExtra(request: UpdateWorkerGroupRequest): WorkerGroupRecord["extra"] {
  const { min_load, target_util, cold_mult, max_workers } = request;
  return Object.fromEntries(Object.entries({ min_load, target_util, cold_mult, max_workers }).filter(([, v]) => v !== undefined));
}

/**
 * The container port a worker's model server listens on: its template's `WORKER_PORT` when it publishes that port,
 * else the first port it publishes beside SSH's (`-p 8000:8000`), as `8000/tcp`.
 */
export function workerPort(instance: InstanceRecord): string | undefined {
  const published = Object.keys(instance.ports).filter((port) => port !== "22/tcp");
  const named = containerEnv(instance.config).find(([key]) => key === "WORKER_PORT")?.[1];
  return named && published.includes(`${named}/tcp`) ? `${named}/tcp` : published[0];
}
