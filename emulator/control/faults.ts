import { FastifyInstance } from "fastify";
import { z } from "zod";
import { deprecationBody, RETIRED_STATUS } from "../http/moves";

const STATUS_CODES: Record<number, string> = { 429: "rate_limited", 500: "server_error", 502: "bad_gateway", 503: "service_unavailable" };

/**
 * Faults injected into the wire on purpose, so clients can be tested against a misbehaving service: an error
 * status (any 4xx or 5xx; its `error` code and `msg` may be given, as the live service's 404 `auth_error` for a
 * bad key, or a plain-text body, as some live 429s), added latency, a dropped connection, a request that is carried out but whose
 * response is lost, or the answer of a retired endpoint (`deprecated`: the live service's deprecation body, at
 * `status`, any from 200 to 599, default 410; see emulator/http/moves.ts). Each fault hits the next `times`
 * requests that match its method and path prefix.
 */
export const FaultSpec = z
  .object({
    method: z.enum(["GET", "POST", "PUT", "DELETE"]).optional(),
    /** Prefix of the request path, e.g. `/api/v0/asks/`. */
    path: z.string().startsWith("/"),
    kind: z.enum(["status", "latency", "drop", "lost_response", "deprecated"]),
    status: z.number().int().min(200).max(599).optional(),
    retryAfterSeconds: z.number().int().positive().optional(),
    /** A status fault's `error` code (default the status's: `rate_limited`, `server_error`, ...) and `msg`. */
    error: z.string().min(1).max(100).optional(),
    msg: z.string().max(1000).optional(),
    /** A status fault answered as this plain text (`Content-Type: text/plain`) instead of a JSON body. */
    text: z.string().max(1000).optional(),
    delayMs: z.number().int().min(0).max(60_000).optional(),
    times: z.number().int().positive().default(1),
  })
  .strict()
  .refine((f) => f.kind !== "status" || (f.status !== undefined && f.status >= 400), { message: "a status fault needs an error status, 400 to 599", path: ["status"] });
export type FaultSpec = z.infer<typeof FaultSpec>;


export class Faults {
  private pending: FaultSpec[] = [];
  injected = 0;

  /** Adds a fault (for the next request that matches, unless `times` says more). */
  add(fault: z.input<typeof FaultSpec>): void {
    this.pending.push({ ...fault, times: fault.times ?? 1 });
  }

  clear(): void {
    this.pending = [];
  }

  list(): FaultSpec[] {
    return this.pending.map((f) => ({ ...f }));
  }

  /** The fault that hits this request, if any (and one hit fewer for it). */
  take(method: string, path: string): FaultSpec | undefined {
    const fault = this.pending.find((f) => (!f.method || f.method === method) && path.startsWith(f.path));
    if (!fault) return undefined;
    fault.times--;
    if (fault.times <= 0) this.pending = this.pending.filter((f) => f !== fault);
    this.injected++;
    return fault;
  }
}

/**
 * Hooks the faults into the server. A fault is taken when the request arrives; `status` and `drop` act at once
 * (the service never gets the request). `latency` waits once the request has been read in full: a client that
 * gives up meanwhile (its timeout, a reset) has still sent it, and, as on a real server, it is carried out
 * after the delay; only the answer finds no one. `lost_response` carries it out and then drops the answer.
 */
export function installFaults(app: FastifyInstance, faults: Faults): void {
  const lost = new WeakSet<object>();
  const delayed = new WeakMap<object, number>();
  app.addHook("onRequest", async (request, reply) => {
    const fault = faults.take(request.method, request.url.split("?")[0]);
    if (!fault) return;
    switch (fault.kind) {
      case "latency":
        delayed.set(request, fault.delayMs ?? 1000);
        return;
      case "drop":
        request.raw.socket.destroy();
        return reply.hijack();
      case "lost_response":
        lost.add(request);
        return;
      case "deprecated":
        return reply.status(fault.status ?? RETIRED_STATUS).type("application/json").send(deprecationBody(fault.path));
      case "status":
        if (fault.retryAfterSeconds) reply.header("Retry-After", String(fault.retryAfterSeconds));
        if (fault.text !== undefined) return reply.status(fault.status!).type("text/plain").send(fault.text);
        return reply
          .status(fault.status!)
          .type("application/json")
          .send({ success: false, error: fault.error ?? STATUS_CODES[fault.status!] ?? "injected_fault", msg: fault.msg ?? `Injected fault: ${fault.status}` });
    }
  });
  app.addHook("preHandler", async (request) => {
    const delayMs = delayed.get(request);
    if (delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, delayMs));
  });
  app.addHook("onSend", async (request, _reply, payload) => {
    if (!lost.has(request)) return payload;
    // The request was carried out; the client never hears of it.
    request.raw.socket.destroy();
    return payload;
  });
}
