import { createHash } from "node:crypto";
import axios, { AxiosInstance, AxiosResponse } from "axios";
import pRetry from "p-retry";
import { z } from "zod";
import { apiKeysApi } from "./apikeys";
import { billingApi } from "./billing";
import type { Call } from "./call";
import type { Patience } from "./pacing";
import { AccountRef, Connection, resolveConnection } from "./connection";
import { instancesApi } from "./instances";
import { offersApi } from "./offers";
import { proxyOptionFor } from "./proxy";
import { RequestGate } from "./request-gate";
import { describeIssues, User } from "./schemas";
import { sshKeysApi } from "./ssh-keys";
import { envVarsApi } from "./env-vars";
import { priceIncreasesApi } from "./price-increases";
import { subaccountsApi, teamMembersApi, teamRolesApi, teamsApi } from "./teams";
import { webhooksApi } from "./webhooks";
import { endpointsApi, workerGroupsApi } from "./serverless";
import { deploymentsApi } from "./deployments";
import { templatesApi } from "./templates";
import { tfaApi } from "./tfa";
import { volumesApi } from "./volumes";
import { cloudApi, copiesApi, instanceWorkApi } from "./instance-work";
import { accountApi, notificationsApi } from "./account";
import { benchmarksApi, gpuMetricsApi } from "./market-metrics";
import { Clock, REAL_TIME } from "./clock";
import { Rentals } from "./workflows/rentals";
import {
  GpuRentalError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  RequestInfo,
  ResponseValidationError,
  SearchQuotaExceededError,
  errorForStatus,
  isTransient,
} from "./errors";

export type { Call, Caller, Method } from "./call";
export type { LimitWait, Patience } from "./pacing";
export type { OfferQuery } from "./offers";
export type { InstanceQuery, CreatedInstance, InstanceCreateOptions } from "./instances";

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
  /**
   * The longest a call made outside a rental waits for the service's rate limit (a 429's `Retry-After`, and the
   * calls of its endpoint queued before it; the service's own client waits as long). A longer wait, or one past
   * the call's deadline, ends the call with a RateLimitedError that says when to come back. A rental's calls wait
   * up to the rental's deadline instead. Default 60 s.
   */
  maxRetryAfterMs?: number;
  onRetry?: (event: RetryEvent) => void;
  /**
   * Where the service's autoscaler answers its own calls (`/route/`, an endpoint's workers and logs, a group's
   * roll): on the live service a host of its own (`https://run.vast.ai`). Default the API's URL, where the emulator
   * answers them.
   */
  autoscalerUrl?: string;
  /** The clock of the call deadlines and of the pauses a 429 asks for. Default real time. */
  clock?: Clock;
  /**
   * What the rentals and calls made through this client share (offer claims and searches, the queue of capped
   * rentals, the queues of rate-limited endpoints): clients given the same one coordinate (a Pulumi provider gives
   * all of its clients one). Default: the client's own.
   */
  rentals?: Rentals;
}

/** A typed client of the GPU marketplace API. Every response is validated against the wire schemas. */
export class GpuRentalClient {
  readonly apiUrl: string;
  private readonly http: AxiosInstance;
  private readonly options: ClientOptions;
  private readonly gate: RequestGate;
  readonly #clock: Clock;
  readonly #rentals: Rentals;
  /** The service and the key (a fingerprint of it): the service's limits are per key. */
  readonly #scope: string;

  constructor(options: ClientOptions = {}) {
    const connection = resolveConnection(options, options.account);
    this.options = options;
    this.#clock = options.clock ?? REAL_TIME;
    this.gate = new RequestGate(options.maxConcurrentRequests ?? 16);
    this.#rentals = options.rentals ?? new Rentals(this.#clock);
    this.apiUrl = connection.apiUrl.replace(/\/+$/, "");
    this.#scope = `${this.apiUrl} ${createHash("sha256").update(connection.apiKey).digest("hex").slice(0, 16)}`;
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
  readonly offers = offersApi(this);
  /** Instances: `get` answers null for one that does not exist (or is not yours), as for every kind. */
  readonly instances = { ...instancesApi(this), ...instanceWorkApi(this) };
  /** Copies between instances (and the address to copy with this computer over SSH). */
  readonly copies = copiesApi(this);
  /** The account's cloud connections (`connections`) and copies to and from them. */
  readonly cloudCopies = cloudApi(this);
  /** The account's credit moves, details and history (addresses, important actions). */
  readonly account = accountApi(this);
  /** The kinds of event and the account's choice of channel (email, webhooks) for each. */
  readonly notifications = notificationsApi(this);
  /** The market's machines' benchmark results. */
  readonly benchmarks = benchmarksApi(this);
  /** Supply, demand and prices of the market's GPU models, now and over time. */
  readonly gpuMetrics = gpuMetricsApi(this);
  /** Templates, by numeric id (`get`, `delete`) or by content hash (`edit`). */
  readonly templates = templatesApi(this);
  /** Volumes and the offers they are made from. */
  readonly volumes = volumesApi(this);
  /** SSH public keys of the account (instances take them when created), and attaching one to an instance. */
  readonly sshKeys = sshKeysApi(this);
  /** The account's environment variables (every instance created afterwards gets them); values are never read back. */
  readonly envVars = envVarsApi(this);
  /** Hosts' raises of running contracts' rates, pending until accepted or rejected. */
  readonly priceIncreases = priceIncreasesApi(this);
  /** The team this key's account is (one an account), its roles and its members; and subaccounts. */
  readonly teams = teamsApi(this);
  readonly teamRoles = teamRolesApi(this);
  readonly teamMembers = teamMembersApi(this);
  readonly subaccounts = subaccountsApi(this);
  /** Where the service POSTs the account's events, signed (verifyWebhookDelivery checks a delivery). */
  readonly webhooks = webhooksApi(this);
  /** Serverless endpoints (scaling targets) and their worker groups (template and criteria); `route` sends them requests. */
  readonly endpoints = endpointsApi(this);
  readonly workerGroups = workerGroupsApi(this);
  /** Code served as a versioned serverless deployment (its bundle, versions, endpoint and group); sdk/workflows/deploy.ts pushes a folder. */
  readonly deployments = deploymentsApi(this);
  /** API keys of the account; a key's value is in the answer of `create` only. */
  readonly apiKeys = apiKeysApi(this);
  /** Two-factor authentication (`/api/v0/tfa/...`). */
  readonly tfa = tfaApi(this);
  readonly users = { current: (): Promise<User> => this.call({ method: "GET", path: "/api/v0/users/current/", schema: User }) };
  readonly billing = billingApi(this);

  /** What the rentals made through `client` share with each other (workflows/rentals.ts). */
  static rentalsOf(client: GpuRentalClient): Rentals {
    return client.#rentals;
  }

  /**
   * Sends one request: retries transient failures (when safe), maps error statuses to typed errors, and
   * validates the response with `schema`. Every endpoint function of the SDK goes through here. Once a 429 names
   * its window, the calls of that endpoint and key take turns (sdk/pacing.ts): time spent waiting for a turn is not
   * the call's (`callDeadlineMs`) but its `patience`'s (a rental's deadline), or, without one, the call's own bound.
   */
  async call<S extends z.ZodType>(call: Call<S>, patience: Patience = {}): Promise<z.infer<S>> {
    const lane = GpuRentalClient.rentalsOf(this).pacing.lane(call.autoscaler ? `${this.#scope} autoscaler` : this.#scope, call.method, call.path);
    const order = lane.order();
    const deadlineMs = this.options.callDeadlineMs ?? 45_000;
    let deadline = this.#clock.now() + deadlineMs;
    // Without a rental's deadline, waiting counts against the call's own: it waits at most maxRetryAfterMs of it.
    const until = () => patience.until ?? this.#clock.now() + Math.max(0, Math.min(this.options.maxRetryAfterMs ?? 60_000, deadline - this.#clock.now()));
    const waiting = { bound: "the end of this call's wait (maxRetryAfterMs, within its deadline)", ...patience };
    let turn = await lane.take(order, until(), waiting);
    for (let waits = 1; ; waits++) {
      if (patience.until !== undefined) deadline += turn.waitedMs;
      let failure: unknown;
      try {
        const answer = await this.#tries(call, deadline, deadlineMs);
        turn.done();
        return answer;
      } catch (error) {
        failure = error;
      }
      const error = failure as GpuRentalError;
      if (!(error instanceof RateLimitedError) || error.retryAfterMs === undefined || !isTransient(error)) {
        turn.done();
        throw error;
      }
      lane.limited(error.retryAfterMs);
      const bound = until();
      if (this.#clock.now() + error.retryAfterMs > bound) {
        turn.done();
        throw waitsTooLong(error, bound - this.#clock.now(), this.#clock, patience.bound);
      }
      this.options.onRetry?.({ request: error.request!, attempt: waits, retriesLeft: this.options.retries ?? 5, error });
      // In line again, at its own place, before its turn ends: no call asked later goes first.
      const again = lane.take(order, bound, waiting);
      turn.done();
      turn = await again;
    }
  }

  /** Tries one call: again after transient failures (a 429 naming its window is the lane's, not retried here). */
  #tries<S extends z.ZodType>(call: Call<S>, deadline: number, deadlineMs: number): Promise<z.infer<S>> {
    const request: RequestInfo = { method: call.method, path: call.path };
    const retryable = (error: unknown) =>
      call.idempotent === false ? error instanceof RateLimitedError && isTransient(error) : isTransient(error);
    let tries = 0;
    return pRetry(
      async (attempt) => {
        tries = attempt;
        try {
          return await this.gate.run(() => this.send(call, request, deadline));
        } catch (error) {
          // A DELETE retried after a lost answer finds the thing gone: the earlier try deleted it.
          if (attempt > 1 && call.method === "DELETE" && error instanceof NotFoundError) return call.schema.parse({ success: true });
          if (error instanceof RateLimitedError && error.retryAfterMs !== undefined) throw new pRetry.AbortError(error);
          if (retryable(error) && deadline - this.#clock.now() > 100) throw error;
          throw new pRetry.AbortError(withinDeadline(error as Error, tries, deadline - this.#clock.now(), deadlineMs));
        }
      },
      {
        retries: this.options.retries ?? 5,
        // The pause between tries is taken below, on the client's clock.
        minTimeout: 0,
        maxTimeout: 0,
        onFailedAttempt: async (failure) => {
          const error = failure as unknown as GpuRentalError;
          if (failure.retriesLeft > 0) {
            this.options.onRetry?.({ request, attempt: failure.attemptNumber, retriesLeft: failure.retriesLeft, error });
            await this.#clock.sleep(backoffMs(this.options, failure.attemptNumber));
          }
        },
      },
    );
  }

  private async send<S extends z.ZodType>(call: Call<S>, request: RequestInfo, deadline: number): Promise<z.infer<S>> {
    let res: AxiosResponse;
    const timeout = Math.max(1, Math.min(this.options.timeoutMs ?? 15_000, deadline - this.#clock.now()));
    // An absolute URL goes there rather than to the API's.
    const base = call.autoscaler && this.options.autoscalerUrl ? this.options.autoscalerUrl.replace(/\/+$/, "") : undefined;
    try {
      // A call without a body says no content type (axios would call its empty POST a form).
      const headers = call.body === undefined ? { "Content-Type": false } : {};
      res = await this.http.request({ method: call.method, url: base ? `${base}${call.path}` : call.path, data: call.body, headers, timeout });
    } catch (error) {
      const code = (error as { code?: string }).code ?? "network";
      const what = code === "ECONNABORTED" || code === "ETIMEDOUT" ? `no answer within ${seconds(timeout)}` : `no response (${code})`;
      throw new NetworkError(`${call.method} ${call.path} failed: ${what} from ${base ?? this.apiUrl}. Is the service reachable?`, { code, request, cause: error });
    }
    // `success: false` is a refusal whatever the status (a retired endpoint may answer so with a 200).
    if (res.status < 200 || res.status >= 300 || declined(res.data)) throw toServiceError(res, request);
    const parsed = call.schema.safeParse(res.data);
    if (!parsed.success) {
      throw new ResponseValidationError(`${call.method} ${call.path}: the response does not match the API schema: ${describeIssues(parsed.error)}`, {
        status: res.status,
        request,
      });
    }
    return parsed.data;
  }
}

/** The pause after failed try `attempt`: ×1.5 a try from the first delay, up to the last, jittered (×1 to ×2). */
function backoffMs(options: ClientOptions, attempt: number): number {
  const first = options.minRetryDelayMs ?? 150;
  return Math.min(first * 1.5 ** (attempt - 1) * (1 + Math.random()), options.maxRetryDelayMs ?? 5_000);
}

/** The error as it ends a call: a transient one that ran out of time says so, and how long and how often it tried. */
function withinDeadline(error: Error, tries: number, leftMs: number, deadlineMs: number): Error {
  if (!isTransient(error) || leftMs > 100) return error;
  error.message += ` (gave up after ${tries} ${tries === 1 ? "try" : "tries"} in ${seconds(deadlineMs)}, the call's deadline)`;
  return error;
}

function seconds(ms: number): string {
  return `${ms < 10_000 ? (ms / 1000).toFixed(1) : Math.round(ms / 1000)} s`;
}

function declined(body: unknown): boolean {
  return typeof body === "object" && body !== null && (body as { success?: unknown }).success === false;
}

/**
 * A 429 whose `Retry-After` is longer than the call may wait (`boundMs`; `bound` names a rental's deadline): it
 * says so, and when to come back, rather than trying again too early or waiting past the deadline.
 */
function waitsTooLong(error: RateLimitedError, boundMs: number, clock: Clock, bound?: string): RateLimitedError {
  const wait = error.retryAfterMs ?? 0;
  const back = new Date(clock.now() + wait).toISOString();
  const past = bound ? `past ${bound} (in ${seconds(Math.max(0, boundMs))})` : `longer than this call waits (${seconds(Math.max(0, boundMs))})`;
  error.message += ` The service asks to wait ${seconds(wait)} before trying again (Retry-After), ${past}: try again after ${back}.`;
  return error;
}

/**
 * What an error answer says: its `error` code, its message (`msg`; `detail` in some 429s; the text itself when
 * the body is plain text, as some 429s are), the `new_contract` of a refusal that made an instance anyway, and the
 * wait a 429 names in its body (`retry_after` seconds, or its words: `Retry in 3 s`).
 */
function readErrorBody(data: unknown): { code?: string; msg?: string; newContract?: number; retryAfterMs?: number } {
  if (typeof data === "string") {
    const msg = data.trim().slice(0, 200) || undefined;
    return { msg, retryAfterMs: waitInWords(msg) };
  }
  if (typeof data !== "object" || data === null) return {};
  const body = data as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const contract = body.new_contract;
  const msg = text(body.msg) ?? text(body.detail) ?? text(body.message);
  const retryAfter = body.retry_after;
  return {
    code: text(body.error),
    msg,
    newContract: typeof contract === "number" && Number.isInteger(contract) ? contract : undefined,
    retryAfterMs: typeof retryAfter === "number" && retryAfter > 0 ? retryAfter * 1000 : waitInWords(msg),
  };
}

/** The wait a message names: `Retry in 3 s`, `try again after 2 seconds`, `retry after 500 ms`. */
function waitInWords(msg: string | undefined): number | undefined {
  const match = msg && /\b(?:retry|try again)\s+(?:in|after)\s+(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?)\b/i.exec(msg);
  if (!match) return undefined;
  const unit = match[2].toLowerCase();
  const ms = Number(match[1]) * (unit.startsWith("ms") || unit.startsWith("milli") ? 1 : unit.startsWith("m") ? 60_000 : 1000);
  return ms > 0 ? ms : undefined;
}

function toServiceError(res: AxiosResponse, request: RequestInfo): GpuRentalError {
  const { code, msg, newContract, retryAfterMs: named } = readErrorBody(res.data);
  const ErrorType = errorForStatus(res.status, code);
  const message = `${request.method} ${request.path} failed with ${res.status}${code ? ` ${code}` : ""}: ${msg ?? "no message"}`;
  const error = new ErrorType(message, { status: res.status, code, serviceMessage: msg, request, newContract });
  if (error instanceof RateLimitedError) error.retryAfterMs = retryAfterMs(res.headers["retry-after"]) ?? named;
  if (error instanceof SearchQuotaExceededError) quotaSpent(error, res.headers["x-ratelimit-reset"]);
  return error;
}

/** `Retry-After` in seconds, or as an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(header: unknown): number | undefined {
  if (typeof header !== "string" || !header.trim()) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/** The quota's message: spent, when it comes back (`X-RateLimit-Reset`, epoch seconds), and not to search meanwhile. */
function quotaSpent(error: SearchQuotaExceededError, reset: unknown): void {
  const at = Number(reset);
  if (typeof reset === "string" && Number.isFinite(at) && at > 0) error.resetsAt = new Date(at * 1000);
  const when = error.resetsAt
    ? `It resets at ${error.resetsAt.toISOString()} (in ${duration(error.resetsAt.getTime() - Date.now())})`
    : "It resets at midnight UTC";
  error.message =
    `Offer search refused: the daily search quota of this API key is spent (${error.serviceMessage ?? "search_quota_exceeded"}). ` +
    `${when}; searching again before then only uses up more of it, so nothing was retried.`;
}

function duration(ms: number): string {
  const minutes = Math.max(0, Math.ceil(ms / 60_000));
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
