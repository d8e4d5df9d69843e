import type { Clock } from "./clock";

/**
 * One per client, shared by all its calls: at most `concurrency` requests in flight, and a pause that a 429's
 * `Retry-After` sets for every call of the client (the service limits the key, not the one request that met it).
 */
export class RequestGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private pausedUntil = 0;

  constructor(
    private readonly concurrency: number,
    private readonly clock: Clock,
  ) {}

  /** Runs `send` when a slot is free and no pause is in force. */
  async run<T>(send: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      for (let wait = this.pausedUntil - this.clock.now(); wait > 0; wait = this.pausedUntil - this.clock.now()) await this.clock.sleep(wait);
      return await send();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }

  /** Holds every call back for `ms` (no sooner than a pause already set ends). */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, this.clock.now() + ms);
  }
}
