import { createVerify } from "node:crypto";
import type { GpuRentalClient } from "../client";
import { Clock, REAL_TIME } from "../clock";
import { GpuRentalError } from "../errors";
import { EndpointWorker, RouteAuthData, RouteResponse } from "../schemas";

/**
 * Routing a request to a serverless endpoint's worker: ask `/route/` for a ready worker (again, with the request's
 * `request_idx`, while none is), then send the request to that worker with the route's signed answer, which the
 * worker checks (`verifyRouteSignature`).
 */

export interface RouteOptions {
  /** The request's load, in the endpoint's unit (default 100). */
  cost?: number;
  /** The worker's path the request goes to (default `/`). */
  path?: string;
  /** Give up after this long without an answer. Default 5 minutes (a cold start rents and boots a worker). */
  timeoutMs?: number;
  /** The longest pause between two asks of `/route/` (each a random pause up to it, growing to it). Default 5 s. */
  maxBackoffMs?: number;
  /** The endpoint's own key (its `api_key` in the listing); default the client's key. */
  endpointKey?: string;
  clock?: Clock;
  /** Told of each answer without a ready worker (the workers by state). */
  onWait?: (status: string) => void;
}

export interface Routed<T = unknown> {
  /** The worker's answer. */
  body: T;
  /** The worker that answered, and the request's number and index on the endpoint. */
  url: string;
  reqnum: number;
  requestIdx?: number;
  /** How many times `/route/` was asked. */
  asks: number;
}

export class RouteTimeoutError extends GpuRentalError {
  override name = "RouteTimeoutError";
}

/** The worker refused the request (an answer other than 2xx): its status and body. */
export class WorkerError extends GpuRentalError {
  override name = "WorkerError";
  constructor(
    message: string,
    /** The worker's status (the service's own `status` is not involved). */
    workerStatus: number,
    readonly body: string,
  ) {
    super(message, { status: workerStatus });
  }
}

/**
 * Sends `payload` to a ready worker of the endpoint named `endpoint` and answers the worker's JSON answer. A
 * worker that cannot be reached (gone in a scale-down or a rolling update) is asked for again under the same
 * `request_idx`, so a request is never lost to the autoscaler's moves; a worker's own refusal is a WorkerError.
 */
export async function route<T = unknown>(client: GpuRentalClient, endpoint: string, payload: unknown, options: RouteOptions = {}): Promise<Routed<T>> {
  const clock = options.clock ?? REAL_TIME;
  const deadline = clock.now() + (options.timeoutMs ?? 300_000);
  const maxBackoff = options.maxBackoffMs ?? 5_000;
  let requestIdx: number | undefined;
  let lastStatus = "not asked yet";
  for (let asks = 1; ; asks++) {
    const answer = await client.call({
      method: "POST",
      path: "/route/",
      autoscaler: true,
      body: { endpoint, cost: options.cost ?? 100, ...(options.endpointKey && { api_key: options.endpointKey }), ...(requestIdx !== undefined && { request_idx: requestIdx }) },
      schema: RouteResponse,
      idempotent: true,
    });
    requestIdx = answer.request_idx ?? requestIdx;
    if (answer.url && answer.signature && answer.reqnum !== undefined) {
      const sent = await toWorker<T>(answer, payload, options.path ?? "/", Math.max(1, deadline - clock.now()));
      if (sent.ok) return { body: sent.body, url: answer.url, reqnum: answer.reqnum, requestIdx, asks };
      lastStatus = `worker ${answer.url} unreachable (${sent.why})`;
    } else {
      lastStatus = answer.status ?? "no worker ready";
      options.onWait?.(lastStatus);
    }
    const left = deadline - clock.now();
    if (left <= 0) {
      const why = await whyNoWorker(client, endpoint);
      throw new RouteTimeoutError(
        `No worker of endpoint ${endpoint} answered in ${options.timeoutMs ?? 300_000} ms (last: ${lastStatus}). ` +
          (why ? `The endpoint's log says: ${why}` : "Check its worker group's criteria and logs (client.endpoints.logs)."),
      );
    }
    // Random pauses that grow to the cap: many clients waiting on one cold start do not ask in step.
    await clock.sleep(Math.min(left, Math.random() * Math.min(maxBackoff, 250 * 2 ** Math.min(asks, 8))));
  }
}

/** The endpoint log's lines a timeout quotes: its last ones about workers that failed, else its last ones. */
const WHY_LINES = 3;

/**
 * Why no worker became ready, in the autoscaler's own words: the last lines of the endpoint's log that tell of a
 * failure (a worker whose start command exited, one that failed), else its last lines; undefined when the log
 * cannot be read (a key that may not) or is empty. Read only once the route gives up.
 */
async function whyNoWorker(client: GpuRentalClient, endpoint: string): Promise<string | undefined> {
  try {
    const found = (await client.endpoints.list()).find((e) => e.endpoint_name === endpoint);
    if (!found) return undefined;
    const lines = (await client.endpoints.logs(found.id, 100)).split("\n").map((line) => line.trim()).filter(Boolean);
    const failures = lines.filter((line) => /fail|will not|error|exited|killed/i.test(line));
    const quoted = (failures.length ? failures : lines).slice(-WHY_LINES);
    return quoted.length ? quoted.join(" / ") : undefined;
  } catch {
    return undefined;
  }
}

/** Posts `{auth_data, payload}` to the worker; `ok: false` when it cannot be reached (a refusal throws). */
async function toWorker<T>(answer: RouteResponse, payload: unknown, path: string, timeoutMs: number): Promise<{ ok: true; body: T } | { ok: false; why: string }> {
  const auth: RouteAuthData = { cost: answer.cost ?? 0, endpoint: answer.endpoint, reqnum: answer.reqnum!, request_idx: answer.request_idx, signature: answer.signature!, url: answer.url! };
  let response: Response;
  try {
    // Within the route's deadline: a worker that hangs does not hold the request past it.
    const signal = AbortSignal.timeout(timeoutMs);
    response = await fetch(new URL(path, answer.url), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ auth_data: auth, payload }), signal });
  } catch (error) {
    return { ok: false, why: ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message };
  }
  const text = await response.text().catch((error: Error) => {
    throw new WorkerError(`The worker at ${answer.url} did not finish its answer: ${error.message}`, response.status, "");
  });
  if (!response.ok) throw new WorkerError(`The worker at ${answer.url} answered ${response.status}: ${text.slice(0, 300)}`, response.status, text);
  return { ok: true, body: (text ? JSON.parse(text) : undefined) as T };
}

/**
 * The check a worker (a model server) makes of each request: the route's signature over its own URL, by the key
 * the autoscaler publishes (`GET <autoscaler>/pubkey/`): RSA PKCS#1 v1.5, SHA-256, over `{"url": <url>}` as JSON
 * with an indent of 4. Answers whether it holds; `url` is what the worker knows itself as (its public address:
 * `http://$PUBLIC_IPADDR:$VAST_TCP_PORT_<port>`), so a request signed for another worker is refused. The signature
 * covers the URL only (the service's design): it says the route chose this worker, not which request it is.
 */
export function verifyRouteSignature(publicKeyPem: string, auth: Pick<RouteAuthData, "url" | "signature">, url: string): boolean {
  if (auth.url !== url) return false;
  try {
    return createVerify("sha256").update(JSON.stringify({ url }, null, 4)).verify(publicKeyPem, auth.signature, "base64");
  } catch {
    return false;
  }
}

export interface WaitForWorkersOptions {
  /** How many workers must be ready (default 1). */
  ready?: number;
  timeoutMs?: number;
  pollMs?: number;
  clock?: Clock;
}

/** Polls the endpoint's workers until `ready` of them are; answers them. */
export async function waitForWorkers(client: GpuRentalClient, endpointId: number, options: WaitForWorkersOptions = {}): Promise<EndpointWorker[]> {
  const clock = options.clock ?? REAL_TIME;
  const deadline = clock.now() + (options.timeoutMs ?? 300_000);
  for (;;) {
    const workers = await client.endpoints.workers(endpointId);
    const ready = workers.filter((w) => w.status === "ready");
    if (ready.length >= (options.ready ?? 1)) return workers;
    if (clock.now() >= deadline) {
      const states = workers.map((w) => `${w.id} ${w.status}`).join(", ") || "none";
      throw new RouteTimeoutError(`Endpoint ${endpointId} has ${ready.length} ready worker(s) of ${options.ready ?? 1} after ${options.timeoutMs ?? 300_000} ms (workers: ${states}).`);
    }
    await clock.sleep(options.pollMs ?? 1_000);
  }
}
