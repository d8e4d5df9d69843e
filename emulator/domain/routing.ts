import { createSign, generateKeyPairSync, KeyObject, randomUUID } from "node:crypto";
import type { EndpointRecord, WorkerRecord } from "./records";

/**
 * The router of `/route/` (emulator/SERVERLESS.md): which ready worker takes a request, the load each worker and
 * endpoint holds, and the signature a worker checks. Requests are the clients' own, in flight on this computer:
 * they live in memory only, not in saved state.
 */

/** The load one worker serves per second (the emulator does not benchmark: every worker is alike). */
export const WORKER_PERF = 1000;
/** A request's load when the client does not say (the vendor's SDK's default cost). */
export const DEFAULT_COST = 100;
/** How long a routed request holds its worker's load unless the worker reports it done (`/delete_requests/`), emulated ms. */
export const HOLD_MS = 10_000;
/** How long a request that found no ready worker counts as waiting, unless asked for again, emulated ms. */
export const WAIT_MS = 30_000;

interface Held {
  endpointId: number;
  cost: number;
  /** The worker routed to; undefined while the request waits for one. */
  workerId?: number;
  at: number;
}

export type RouteDecision =
  | { routed: true; url: string; reqnum: number; requestIdx: number; signature: string; requestId: string }
  | { routed: false; requestIdx: number; requestId: string };

export interface RouteDeps {
  now(): number;
  /** The ready workers that may take a request; `outdated` ones (being rolled) only when no other has room. */
  candidates(endpoint: EndpointRecord): { worker: WorkerRecord; url: string; outdated: boolean }[];
}

export class Router {
  private held = new Map<number, Held>();
  private nextIdx = 1;
  private signingKey?: { private: KeyObject; publicPem: string };

  constructor(private readonly deps: RouteDeps) {}

  /** The PEM of the key `/route/` signs with (`/pubkey/`): made on first use, for this run of the emulator. */
  publicKeyPem(): string {
    return this.key().publicPem;
  }

  /**
   * Routes a request: to the least-loaded worker with room in its queue (`max_queue_time` seconds of its
   * capacity), or, with none, counts it as waiting so that the autoscaler sees the demand.
   */
  route(endpoint: EndpointRecord, cost: number, requestIdx?: number): RouteDecision {
    const now = this.deps.now();
    endpoint.lastRequestAt = now;
    this.expire(now);
    const idx = requestIdx !== undefined && this.held.get(requestIdx)?.endpointId === endpoint.id ? requestIdx : this.nextIdx++;
    const room = WORKER_PERF * Math.max(endpoint.maxQueueTime, 1);
    const pick = this.deps
      .candidates(endpoint)
      .map((c) => ({ ...c, load: this.workerLoad(c.worker) }))
      .filter((c) => c.load + cost <= room || c.load === 0)
      .sort((a, b) => Number(a.outdated) - Number(b.outdated) || a.load - b.load)[0];
    const requestId = randomUUID();
    if (!pick) {
      this.held.set(idx, { endpointId: endpoint.id, cost, at: now });
      return { routed: false, requestIdx: idx, requestId };
    }
    this.held.set(idx, { endpointId: endpoint.id, cost, workerId: pick.worker.instanceId, at: now });
    const reqnum = ++endpoint.reqnum;
    return { routed: true, url: pick.url, reqnum, requestIdx: idx, signature: this.sign(pick.url), requestId };
  }

  /** A worker finished these requests: their load leaves it. */
  done(workerId: number, requestIdxs: number[]): number {
    let released = 0;
    for (const idx of requestIdxs) {
      if (this.held.get(idx)?.workerId !== workerId) continue;
      this.held.delete(idx);
      released++;
    }
    return released;
  }

  /** The load a worker holds: what was routed to it and is not done, plus what it last reported. */
  workerLoad(worker: WorkerRecord): number {
    let load = worker.reportedLoad ?? 0;
    for (const held of this.held.values()) if (held.workerId === worker.instanceId) load += held.cost;
    return load;
  }

  /** The load of an endpoint: routed and waiting requests. */
  endpointLoad(endpoint: EndpointRecord): number {
    this.expire(this.deps.now());
    let load = 0;
    for (const held of this.held.values()) if (held.endpointId === endpoint.id) load += held.cost;
    return load;
  }

  /** Requests in flight on a worker (routed, not done). */
  working(workerId: number): number {
    return [...this.held.values()].filter((h) => h.workerId === workerId).length;
  }

  /** Forgets the requests of a worker or an endpoint that is gone. */
  forget(by: { workerId: number } | { endpointId: number }): void {
    const gone = (held: Held) => ("workerId" in by ? held.workerId === by.workerId : held.endpointId === by.endpointId);
    for (const [idx, held] of this.held) if (gone(held)) this.held.delete(idx);
  }

  private expire(now: number): void {
    for (const [idx, held] of this.held) if (now - held.at >= (held.workerId === undefined ? WAIT_MS : HOLD_MS)) this.held.delete(idx);
  }

  /** What a worker checks: RSA PKCS#1 v1.5 over SHA-256 of `{"url": ...}` as JSON with sorted keys and an indent of 4. */
  private sign(url: string): string {
    return createSign("sha256").update(JSON.stringify({ url }, null, 4)).sign(this.key().private, "base64");
  }

  private key(): { private: KeyObject; publicPem: string } {
    if (!this.signingKey) {
      const pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
      this.signingKey = { private: pair.privateKey, publicPem: pair.publicKey.export({ type: "spki", format: "pem" }).toString() };
    }
    return this.signingKey;
  }
}
