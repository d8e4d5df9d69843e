/**
 * The emulator's clock. Every time-dependent rule (boot durations, billing, expiries) reads `now()`, so tests
 * move time forward with `advance()` instead of sleeping. A `frozen` clock only moves when told; a running one
 * follows wall time plus whatever was advanced.
 */
export class Clock {
  private offsetMs = 0;
  private readonly frozenAt?: number;
  private readonly moved = new Set<() => void>();

  constructor(mode: "running" | "frozen" = "running", startMs = Date.UTC(2026, 0, 1)) {
    if (mode === "frozen") this.frozenAt = startMs;
  }

  /** Milliseconds since the epoch. */
  now(): number {
    return (this.frozenAt ?? Date.now()) + this.offsetMs;
  }

  /** Seconds since the epoch, as the wire reports dates. */
  nowSeconds(): number {
    return this.now() / 1000;
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`cannot advance the clock by ${ms} ms`);
    this.offsetMs += ms;
    for (const listener of this.moved) listener();
  }

  /**
   * How a reader outside this process follows the clock (an emulated machine's `date`): frozen at `ms`, or
   * running at wall time plus `ms`.
   */
  reading(): { frozen: boolean; ms: number } {
    return this.frozenAt === undefined ? { frozen: false, ms: this.offsetMs } : { frozen: true, ms: this.now() };
  }

  /** Calls `listener` whenever the clock is moved (advanced, restored); returns what stops that. */
  onMove(listener: () => void): () => void {
    this.moved.add(listener);
    return () => this.moved.delete(listener);
  }

  /** Time advanced so far survives a restart with `--data-dir`. */
  snapshot(): { offsetMs: number } {
    return { offsetMs: this.offsetMs };
  }

  restore(data: { offsetMs: number }): void {
    this.offsetMs = data.offsetMs;
    for (const listener of this.moved) listener();
  }
}
