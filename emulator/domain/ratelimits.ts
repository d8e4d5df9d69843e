import { ServiceError } from "./errors";

/** Endpoints the service rate-limits, per caller (key). */
export const RATE_LIMITED = ["network_volume_search", "offer_search", "instance_create"] as const;
export type RateLimitedEndpoint = (typeof RATE_LIMITED)[number];

/** At most `limit` calls in any `windowMs`; a limit of 0 turns it off. */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

/**
 * The spec names 429 on network volume search; the live service also limits offer search (on the order of ten a
 * minute) and instance creation (about one call per few seconds). Volume search is limited by default; the other
 * two are off by default, so that tests and CI runs that search and rent often are not slowed down, and can be
 * switched on (`PUT /_emulator/settings {"rateLimits": ...}`) to test a client's backoff.
 */
export const DEFAULT_RATE_LIMITS: Record<RateLimitedEndpoint, RateLimit> = {
  network_volume_search: { limit: 30, windowMs: 60_000 },
  offer_search: { limit: 0, windowMs: 60_000 },
  instance_create: { limit: 0, windowMs: 3_000 },
};

/** Sliding-window counters, per endpoint and caller, on the emulator's clock. */
export class RateLimits {
  settings: Record<RateLimitedEndpoint, RateLimit> = structuredClone(DEFAULT_RATE_LIMITS);
  private readonly calls = new Map<string, number[]>();

  constructor(private readonly now: () => number) {}

  /** Counts a call; refuses it with 429 `rate_limited` (and when to come back) once the window is full. */
  take(endpoint: RateLimitedEndpoint, caller: string | number): void {
    const { limit, windowMs } = this.settings[endpoint];
    if (limit <= 0) return;
    const now = this.now();
    const key = `${endpoint}:${caller}`;
    const recent = (this.calls.get(key) ?? []).filter((t) => t > now - windowMs);
    if (recent.length >= limit) {
      const retryAfterSeconds = Math.max(1, Math.ceil((recent[0] + windowMs - now) / 1000));
      this.calls.set(key, recent);
      throw new ServiceError(
        "rate_limited",
        "rate_limited",
        `Too many requests: at most ${limit} per ${windowMs / 1000} s on this endpoint. Retry in ${retryAfterSeconds} s.`,
        { retry_after: retryAfterSeconds },
      );
    }
    recent.push(now);
    this.calls.set(key, recent);
  }
}

const DAY_MS = 86_400_000;

/**
 * The daily quota of offer search on the live service, per key: rows of offers returned in a UTC day
 * (docs/service-facts.md#rate-limits-and-the-search-quota). Once a key's rows of the day reach `rowsPerDay`, its searches are refused with 429
 * `search_quota_exceeded` until midnight UTC, which the refusal names (`resets_at`, epoch seconds; the HTTP layer
 * sends it as `X-RateLimit-Reset`). Off by default (`rowsPerDay` 0), set through `PUT /_emulator/settings`.
 */
export class SearchQuota {
  rowsPerDay = 0;
  private readonly used = new Map<string | number, { day: number; rows: number }>();

  constructor(private readonly now: () => number) {}

  /** Refuses a search by `caller` once its quota of today is spent. */
  check(caller: string | number): void {
    if (this.rowsPerDay <= 0) return;
    const day = Math.floor(this.now() / DAY_MS);
    const used = this.used.get(caller);
    if (!used || used.day !== day || used.rows < this.rowsPerDay) return;
    const resetsAt = (day + 1) * (DAY_MS / 1000);
    throw new ServiceError(
      "rate_limited",
      "search_quota_exceeded",
      `Daily search quota exceeded: this key has had ${used.rows} offer rows today, its quota is ${this.rowsPerDay}. It resets at midnight UTC.`,
      { resets_at: resetsAt },
    );
  }

  /** Counts the rows a search of `caller` returned. */
  count(caller: string | number, rows: number): void {
    if (this.rowsPerDay <= 0) return;
    const day = Math.floor(this.now() / DAY_MS);
    const used = this.used.get(caller);
    this.used.set(caller, { day, rows: (used?.day === day ? used.rows : 0) + rows });
  }
}
