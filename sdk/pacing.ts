import type { Clock } from "./clock";
import { RateLimitedError } from "./errors";
import { once } from "./once";
import { InterruptedError } from "./workflows/interruption";

/**
 * Calls held back by the service's rate limits. The service limits each endpoint per key and says, in a 429, when
 * the next call may go (`Retry-After`, or its body's words). From then on the calls of that endpoint and key wait
 * in one queue and go one at a time, in the order they were asked, as the limit allows: a program of many rentals
 * is paced instead of retrying in a herd that one call wins each time. The queues are shared by every client given
 * the same Rentals (all the clients of a Pulumi provider), so all the calls of one key meet in them.
 */

/** A call waiting for the service's limit, as it is told to whoever follows it. */
export interface LimitWait {
  /** The endpoint, its ids written `{id}`: `PUT /api/v0/asks/{id}/`. */
  endpoint: string;
  /** Calls of that endpoint and key waiting, this one included. */
  queued: number;
  /** When the next of them may go, on the client's clock (ms). */
  nextAt: number;
}

/** A wait as a progress line says it: `waiting for the service's limit (PUT /api/v0/asks/{id}/): N queued, the next in T s`. */
export function describeWait(wait: LimitWait, now: number): string {
  const next = Math.max(0, wait.nextAt - now) / 1000;
  return `waiting for the service's limit (${wait.endpoint}): ${wait.queued} queued, the next in ${next.toFixed(1)} s`;
}

/** How long one call may be held back by the service's limit, and who is told it waits. */
export interface Patience {
  /** The latest time the call may still be sent, on the client's clock (ms): a rental's deadline. Default: the call's own bound. */
  until?: number;
  /** What that bound is, for the error when the wait would pass it (`the rental's deadline`). */
  bound?: string;
  /** Told when the call starts waiting. */
  onWait?: (wait: LimitWait) => void;
  /** Aborted: a call still waiting leaves the line, nothing sent (an InterruptedError). */
  signal?: AbortSignal;
}

/** A turn taken: how long it waited, and what lets the next call go once this one is answered. */
export interface Turn {
  waitedMs: number;
  done(): void;
}

/** The queues of one Rentals (one provider, or one client), by service, key and endpoint. */
export class Pacing {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly clock: Clock) {}

  /** The queue of `method path` for the key of `scope` (a service's URL and the key's fingerprint). */
  lane(scope: string, method: string, path: string): Lane {
    const endpoint = endpointOf(method, path);
    const key = `${scope} ${endpoint}`;
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = new Lane(endpoint, this.clock)));
    return lane;
  }
}

/** `PUT /api/v0/asks/123/?x=1` → `PUT /api/v0/asks/{id}/`: the service limits an endpoint, whatever its ids. */
export function endpointOf(method: string, path: string): string {
  return `${method} ${path.split("?")[0].replace(/\/\d+(?=\/|$)/g, "/{id}")}`;
}

interface Waiter {
  order: number;
  until: number;
  bound: string;
  go(): void;
  fail(error: Error): void;
}

/** One endpoint and key: free until a 429 names its window, then one call at a time, in order, as the limit allows. */
export class Lane {
  private readonly waiting: Waiter[] = [];
  private asked = 0;
  /** No call goes before this (the service's word). */
  private openAt = 0;
  /** Calls go one at a time until then: one more window after the last one the service named. */
  private pacedUntil = -Infinity;
  private sending = false;
  /** Calls sent before the endpoint was limited, still under way: the first in line waits for them (they were asked first). */
  private unpaced = 0;
  private timer = false;

  constructor(
    readonly endpoint: string,
    private readonly clock: Clock,
  ) {}

  /** A place in the order asked, taken once per call: a call sent back by a 429 keeps its place. */
  order(): number {
    return this.asked++;
  }

  /**
   * The call's turn: at once while the endpoint is not limited; otherwise once the calls asked before it went and
   * the service's window allows. Rejected with a RateLimitedError, nothing sent, as soon as it is known the turn
   * cannot come by `until`.
   */
  take(order: number, until: number, patience: Patience = {}): Promise<Turn> {
    if (!this.paced()) {
      this.unpaced++;
      return Promise.resolve({ waitedMs: 0, done: once(() => this.unpacedDone()) });
    }
    const started = this.clock.now();
    const { signal } = patience;
    const interrupted = () => new InterruptedError(`Interrupted: ${this.endpoint} was waiting for the service's limit, and was not sent.`);
    if (signal?.aborted) return Promise.reject(interrupted());
    return new Promise<Turn>((resolve, reject) => {
      const leave = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(interrupted());
      };
      const waiter: Waiter = {
        order,
        until,
        bound: patience.bound ?? "the end of its wait",
        go: () => {
          signal?.removeEventListener("abort", leave);
          resolve({ waitedMs: this.clock.now() - started, done: once(() => this.done()) });
        },
        fail: (error) => {
          signal?.removeEventListener("abort", leave);
          reject(error);
        },
      };
      signal?.addEventListener("abort", leave, { once: true });
      const at = this.waiting.findIndex((w) => w.order > order);
      this.waiting.splice(at < 0 ? this.waiting.length : at, 0, waiter);
      patience.onWait?.({ endpoint: this.endpoint, queued: this.waiting.length, nextAt: Math.max(this.openAt, this.clock.now()) });
      this.schedule();
    });
  }

  /** A 429 said no call may go for `retryAfterMs`: calls wait, and then go one at a time. */
  limited(retryAfterMs: number): void {
    const now = this.clock.now();
    this.openAt = Math.max(this.openAt, now + retryAfterMs);
    this.pacedUntil = Math.max(this.pacedUntil, this.openAt + retryAfterMs);
  }

  /** Whether calls wait for their turn: some wait or one is under way, or the last window may still be in force. */
  private paced(): boolean {
    return this.waiting.length > 0 || this.sending || this.clock.now() < this.pacedUntil;
  }

  private done(): void {
    this.sending = false;
    this.schedule();
  }

  private unpacedDone(): void {
    this.unpaced--;
    this.schedule();
  }

  /** Lets the first call go when it may; tells those that cannot go by their bound at once. */
  private schedule(): void {
    if (this.sending || this.timer || this.unpaced > 0) return;
    const now = this.clock.now();
    for (const waiter of this.waiting.filter((w) => w.until < Math.max(now, this.openAt))) {
      this.waiting.splice(this.waiting.indexOf(waiter), 1);
      waiter.fail(this.tooLate(waiter, now));
    }
    const first = this.waiting[0];
    if (!first) return;
    if (now >= this.openAt) {
      this.waiting.shift();
      this.sending = true;
      first.go();
      return;
    }
    this.timer = true;
    void this.clock.sleep(this.openAt - now).then(() => {
      this.timer = false;
      this.schedule();
    });
  }

  private tooLate(waiter: Waiter, now: number): RateLimitedError {
    const next = Math.max(this.openAt, now);
    const [method, path] = this.endpoint.split(" ");
    const error = new RateLimitedError(
      `${this.endpoint} was not sent: the service limits it for this key, and the call could not go by ${waiter.bound} ` +
        `(${new Date(waiter.until).toISOString()}; ${this.waiting.length + 1} call(s) were waiting, the next may go at ${new Date(next).toISOString()}). ` +
        `Nothing was sent: try again after ${new Date(next).toISOString()}.`,
      { status: 429, code: "rate_limited", request: { method, path } },
    );
    error.retryAfterMs = next - now;
    return error;
  }
}
