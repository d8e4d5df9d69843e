import axios, { AxiosInstance, AxiosResponse } from "axios";
import pRetry from "p-retry";
import { z } from "zod";
import { AccountRef, Connection, resolveConnection } from "./connection";
import { proxyOptionFor } from "./proxy";
import { RequestGate } from "./request-gate";
import type { OfferFilters } from "./offer-filters";
import { createApiKey, deleteApiKey, getApiKey, listApiKeys } from "./apikeys";
import { listInvoices } from "./billing";
import { addSshKey, attachSshKey, deleteSshKey, listSshKeys } from "./ssh-keys";
import { createTemplate, deleteTemplate, editTemplate, getTemplate, searchTemplates } from "./templates";
import { createNetworkVolume, deleteVolume, getVolume, listVolumes, searchLocalVolumeOffers, searchNetworkVolumeOffers } from "./volumes";
import {
  describeIssues,
  ErrorBody,
  CreateInstanceRequest,
  CreateInstanceResponse,
  FieldFilter,
  Instance,
  InstanceOrder,
  InstancePageResponse,
  InstanceResponse,
  Offer,
  OfferSearchResponse,
  OfferType,
  Order,
  SuccessResponse,
  UpdateInstanceRequest,
  User,
} from "./schemas";
import {
  BadRequestError,
  GpuRentalError,
  ListingError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  RequestInfo,
  ResponseValidationError,
  errorForStatus,
  isTransient,
} from "./errors";

export interface RetryEvent {
  request: RequestInfo;
  attempt: number;
  retriesLeft: number;
  error: GpuRentalError;
}

export interface ClientOptions extends Partial<Connection> {
  /** Connect as this account (its key from stack config or the environment) instead of the default one. */
  account?: AccountRef;
  /** Further tries of a request that failed transiently (429, 5xx, connection reset). Default 5. */
  retries?: number;
  /** First backoff delay; it grows ×1.5 per try, as the live service's own clients do, with jitter. Default 150 ms. */
  minRetryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** Per-request timeout. Default 15 s. */
  timeoutMs?: number;
  /** A call's overall deadline, its retries included: a service that never answers fails by then. Default 45 s. */
  callDeadlineMs?: number;
  /** Requests in flight at once, over all calls of this client. Default 16. */
  maxConcurrentRequests?: number;
  onRetry?: (event: RetryEvent) => void;
}

/** An offer search: field filters plus the reserved keys of `POST /api/v0/bundles/`. */
export interface OfferQuery {
  filters?: OfferFilters;
  order?: Order;
  type?: OfferType;
  limit?: number;
  /** GB wanted on the disk; offers too small are left out. */
  allocatedStorage?: number;
}

/**
 * An instance listing: `select_filters` in the operators of offer search, over the fields the service lists by
 * (`{ label: { eq: "x" } }`; emulator/domain/instances.ts INSTANCE_FIELDS), so the service narrows the rows.
 */
export interface InstanceQuery {
  filters?: Record<string, FieldFilter>;
  /** Default: by id, ascending (a stable order while paging). */
  order?: InstanceOrder;
}

/** Rows a page of `GET /api/v1/instances/` (the service's most; the public Python client asks for 25). */
const INSTANCE_PAGE = 25;
/** A bound on the pages of one listing: a service whose tokens never end must not keep a client forever. */
const MAX_PAGES = 10_000;
const INSTANCE_LISTING = "The instance listing (GET /api/v1/instances/)";

type Method = "GET" | "POST" | "PUT" | "DELETE";

export interface Call<S extends z.ZodType> {
  method: Method;
  path: string;
  schema: S;
  body?: unknown;
  /**
   * Whether a request that may have reached the service can be sent again safely. Instance creation is not:
   * after a 5xx or a reset its outcome is unknown, so only refusals that prove nothing happened are retried.
   */
  idempotent?: boolean;
}

/** A typed client of the GPU marketplace API. Every response is validated against the wire schemas. */
export class GpuRentalClient {
  readonly apiUrl: string;
  private readonly http: AxiosInstance;
  private readonly options: ClientOptions;
  private readonly gate: RequestGate;

  constructor(options: ClientOptions = {}) {
    const connection = resolveConnection(options, options.account);
    this.options = options;
    this.gate = new RequestGate(options.maxConcurrentRequests ?? 16);
    this.apiUrl = connection.apiUrl.replace(/\/+$/, "");
    this.http = axios.create({
      baseURL: this.apiUrl,
      headers: { Authorization: `Bearer ${connection.apiKey}`, Accept: "application/json" },
      // Statuses are mapped to typed errors below, not thrown by axios (whose errors carry the key in headers).
      validateStatus: () => true,
      // HTTPS_PROXY / HTTP_PROXY / NO_PROXY as Node tools read them, but never for a loopback emulator.
      proxy: proxyOptionFor(this.apiUrl),
    });
  }

  /** Offer search. */
  readonly offers = { search: (query?: OfferQuery) => this.searchOffers(query) };

  /** Instances: `get` answers null for one that does not exist (or is not yours), as for every kind. */
  readonly instances = {
    create: (offerId: number, request: CreateInstanceRequest) => this.createInstance(offerId, request),
    list: (query?: InstanceQuery) => this.listInstances(query),
    get: (id: number) => this.getInstance(id),
    update: (id: number, change: UpdateInstanceRequest) => this.updateInstance(id, change),
    start: (id: number) => this.updateInstance(id, { state: "running" }),
    stop: (id: number) => this.updateInstance(id, { state: "stopped" }),
    destroy: (id: number) => this.destroyInstance(id),
  };

  /** Templates, by numeric id (`get`, `delete`) or by content hash (`edit`). */
  readonly templates = {
    search: (filters?: Parameters<typeof searchTemplates>[1]) => searchTemplates(this, filters),
    get: (id: number) => getTemplate(this, id),
    create: (template: Parameters<typeof createTemplate>[1]) => createTemplate(this, template),
    edit: (hashId: string, changes: Parameters<typeof editTemplate>[2]) => editTemplate(this, hashId, changes),
    delete: (id: number) => deleteTemplate(this, { id }),
  };

  /** Volumes and the offers they are made from. */
  readonly volumes = {
    searchNetworkOffers: (q?: Parameters<typeof searchNetworkVolumeOffers>[1]) => searchNetworkVolumeOffers(this, q),
    searchLocalOffers: (q?: Parameters<typeof searchLocalVolumeOffers>[1]) => searchLocalVolumeOffers(this, q),
    createNetwork: (request: Parameters<typeof createNetworkVolume>[1]) => createNetworkVolume(this, request),
    list: (type?: Parameters<typeof listVolumes>[1]) => listVolumes(this, type),
    get: (id: number) => getVolume(this, id),
    delete: (id: number) => deleteVolume(this, id),
  };

  /** SSH public keys of the account (instances take them when created), and attaching one to an instance. */
  readonly sshKeys = {
    add: (publicKey: string) => addSshKey(this, publicKey),
    list: () => listSshKeys(this),
    delete: (id: number) => deleteSshKey(this, id),
    attach: (instanceId: number, publicKey: string) => attachSshKey(this, instanceId, publicKey),
  };

  /** API keys of the account; a key's value is in the answer of `create` only. */
  readonly apiKeys = {
    create: (request?: Parameters<typeof createApiKey>[1]) => createApiKey(this, request),
    list: () => listApiKeys(this),
    get: (id: number) => getApiKey(this, id),
    delete: (id: number) => deleteApiKey(this, id),
  };

  readonly users = { current: () => this.currentUser() };
  readonly billing = { invoices: () => listInvoices(this) };

  async searchOffers(query: OfferQuery = {}): Promise<Offer[]> {
    const body: Record<string, unknown> = { ...query.filters };
    if (query.order) body.order = query.order;
    if (query.type) body.type = query.type;
    if (query.limit !== undefined) body.limit = query.limit;
    if (query.allocatedStorage !== undefined) body.allocated_storage = query.allocatedStorage;
    const res = await this.call({ method: "POST", path: "/api/v0/bundles/", body, schema: OfferSearchResponse });
    return res.offers;
  }

  /** Accepts an offer (`PUT /api/v0/asks/{offer_id}/`). Throws OfferUnavailableError when it is gone. */
  async createInstance(offerId: number, request: CreateInstanceRequest): Promise<CreateInstanceResponse> {
    const body = parseRequest(CreateInstanceRequest, request, "instance creation");
    return this.call({
      method: "PUT",
      path: `/api/v0/asks/${offerId}/`,
      body,
      schema: CreateInstanceResponse,
      idempotent: false,
    });
  }

  /**
   * Every instance that matches `query`, page after page (`GET /api/v1/instances/`, following `next_token` to the
   * end). A page that fails, says `success: false` or cannot be read is a ListingError, never a shorter listing.
   */
  async listInstances(query: InstanceQuery = {}): Promise<Instance[]> {
    const rows: Instance[] = [];
    const seen = new Set<string>();
    let token: string | undefined;
    for (let pages = 0; pages < MAX_PAGES; pages++) {
      const page = await this.instancePage(query, token);
      rows.push(...page.instances);
      if (!page.next_token) return rows;
      if (seen.has(page.next_token)) throw listingError(`its pages come round again (next_token ${JSON.stringify(page.next_token)} twice)`);
      seen.add(page.next_token);
      token = page.next_token;
    }
    throw listingError(`it has more than ${MAX_PAGES} pages`);
  }

  private async instancePage(query: InstanceQuery, afterToken: string | undefined): Promise<InstancePageResponse> {
    const params = new URLSearchParams({
      select_filters: JSON.stringify(query.filters ?? {}),
      order_by: JSON.stringify(query.order ?? [{ col: "id", dir: "asc" }]),
      limit: String(INSTANCE_PAGE),
      ...(afterToken !== undefined && { after_token: afterToken }),
    });
    try {
      return await this.call({ method: "GET", path: `/api/v1/instances/?${params}`, schema: InstancePageResponse });
    } catch (error) {
      throw error instanceof GpuRentalError ? new ListingError(INSTANCE_LISTING, error) : error;
    }
  }

  /** The instance, or null when it does not exist (or is not yours). */
  async getInstance(id: number): Promise<Instance | null> {
    const res = await this.call({ method: "GET", path: `/api/v0/instances/${id}/`, schema: InstanceResponse });
    return res.instances;
  }

  async updateInstance(id: number, change: UpdateInstanceRequest): Promise<void> {
    const body = parseRequest(UpdateInstanceRequest, change, "instance update");
    await this.call({ method: "PUT", path: `/api/v0/instances/${id}/`, body, schema: SuccessResponse });
  }

  async destroyInstance(id: number): Promise<void> {
    await this.call({ method: "DELETE", path: `/api/v0/instances/${id}/`, body: {}, schema: SuccessResponse });
  }

  async currentUser(): Promise<User> {
    return this.call({ method: "GET", path: "/api/v0/users/current/", schema: User });
  }

  /**
   * Sends one request: retries transient failures (when safe), maps error statuses to typed errors, and
   * validates the response with `schema`. Every endpoint function of the SDK goes through here.
   */
  async call<S extends z.ZodType>(call: Call<S>): Promise<z.infer<S>> {
    const request: RequestInfo = { method: call.method, path: call.path };
    const retryable = (error: unknown) =>
      call.idempotent === false ? error instanceof RateLimitedError && isTransient(error) : isTransient(error);
    const deadlineMs = this.options.callDeadlineMs ?? 45_000;
    const deadline = Date.now() + deadlineMs;
    let tries = 0;
    return pRetry(
      async (attempt) => {
        tries = attempt;
        try {
          return await this.gate.run(() => this.send(call, request, deadline));
        } catch (error) {
          // A DELETE retried after a lost answer finds the thing gone: the earlier try deleted it.
          if (attempt > 1 && call.method === "DELETE" && error instanceof NotFoundError) return call.schema.parse({ success: true });
          if (retryable(error) && deadline - Date.now() > 100) throw error;
          throw new pRetry.AbortError(withinDeadline(error as Error, tries, deadline, deadlineMs));
        }
      },
      {
        retries: this.options.retries ?? 5,
        minTimeout: this.options.minRetryDelayMs ?? 150,
        maxTimeout: this.options.maxRetryDelayMs ?? 5_000,
        factor: 1.5,
        randomize: true,
        onFailedAttempt: (failure) => {
          const error = failure as unknown as GpuRentalError;
          if (failure.retriesLeft > 0) {
            this.options.onRetry?.({ request, attempt: failure.attemptNumber, retriesLeft: failure.retriesLeft, error });
          }
          // Every call of this client waits out the service's Retry-After (p-retry adds its own backoff).
          if (error instanceof RateLimitedError && error.retryAfterMs && failure.retriesLeft > 0) {
            this.gate.pause(Math.min(error.retryAfterMs, 60_000, Math.max(0, deadline - Date.now())));
          }
        },
      },
    );
  }

  private async send<S extends z.ZodType>(call: Call<S>, request: RequestInfo, deadline: number): Promise<z.infer<S>> {
    let res: AxiosResponse;
    const timeout = Math.max(1, Math.min(this.options.timeoutMs ?? 15_000, deadline - Date.now()));
    try {
      res = await this.http.request({ method: call.method, url: call.path, data: call.body, timeout });
    } catch (error) {
      const code = (error as { code?: string }).code ?? "network";
      const what = code === "ECONNABORTED" || code === "ETIMEDOUT" ? `no answer within ${seconds(timeout)}` : `no response (${code})`;
      throw new NetworkError(
        `${call.method} ${call.path} failed: ${what} from ${this.apiUrl}. Is the service reachable?`,
        undefined,
        code,
        undefined,
        request,
      );
    }
    // `success: false` is a refusal whatever the status (a retired endpoint may answer so with a 200).
    if (res.status < 200 || res.status >= 300 || declined(res.data)) throw toServiceError(res, request);
    const parsed = call.schema.safeParse(res.data);
    if (!parsed.success) {
      throw new ResponseValidationError(
        `${call.method} ${call.path}: the response does not match the API schema: ${describeIssues(parsed.error)}`,
        res.status,
        undefined,
        undefined,
        request,
      );
    }
    return parsed.data;
  }
}

/** The error as it ends a call: a transient one that ran out of time says so, and how long and how often it tried. */
function withinDeadline(error: Error, tries: number, deadline: number, deadlineMs: number): Error {
  if (!isTransient(error) || deadline - Date.now() > 100) return error;
  error.message += ` (gave up after ${tries} ${tries === 1 ? "try" : "tries"} in ${seconds(deadlineMs)}, the call's deadline)`;
  return error;
}

function seconds(ms: number): string {
  return `${ms < 10_000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000)} s`;
}

function declined(body: unknown): boolean {
  return typeof body === "object" && body !== null && (body as { success?: unknown }).success === false;
}

function listingError(why: string): ListingError {
  return new ListingError(INSTANCE_LISTING, new ResponseValidationError(why));
}

function toServiceError(res: AxiosResponse, request: RequestInfo): GpuRentalError {
  const body = ErrorBody.safeParse(res.data);
  const code = body.success ? body.data.error : undefined;
  const msg = body.success ? body.data.msg : typeof res.data === "string" ? res.data.slice(0, 200) : undefined;
  const ErrorType = errorForStatus(res.status, code);
  const message = `${request.method} ${request.path} failed with ${res.status}${code ? ` ${code}` : ""}: ${msg ?? "no message"}`;
  const error = new ErrorType(message, res.status, code, msg, request);
  if (error instanceof RateLimitedError) {
    const seconds = Number(res.headers["retry-after"]);
    if (Number.isFinite(seconds) && seconds > 0) error.retryAfterMs = seconds * 1000;
  }
  return error;
}

/** Validates a request before it is sent, so a bad input fails here with a clear message and nothing is created. */
function parseRequest<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new BadRequestError(`Invalid ${what} request: ${describeIssues(parsed.error)}`, undefined, "invalid_args");
  }
  return parsed.data;
}
