import { ServiceError } from "./errors";

/** Endpoints the service rate-limits, per caller (key). */
export const RATE_LIMITED = ["network_volume_search", "offer_search", "instance_create"] as const;
export type RateLimitedEndpoint = (typeof RATE_LIMITED)[number];

/** At most `limit` calls in any `windowMs`; a limit of 0 turns it off. */
export interface RateLimit {
  limit: number;
  windowMs: number;
}

export type RateLimitSettings = Record<RateLimitedEndpoint, RateLimit>;

/**
 * The limits of the live service, per key (docs/emulator.md, "Rate limits", has the figures and where each comes
 * from): network volume search (the spec names its 429), offer search and instance creation. On by default, so
 * that a program the service would refuse or slow down meets that here first.
 */
export const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  network_volume_search: { limit: 30, windowMs: 60_000 },
  offer_search: { limit: 10, windowMs: 60_000 },
  instance_create: { limit: 1, windowMs: 3_000 },
};

/** Every limit off: for tests and runs that are not about limits (`--no-rate-limits`, `rateLimits: "off"`). */
export const NO_RATE_LIMITS: RateLimitSettings = {
  network_volume_search: { limit: 0, windowMs: 60_000 },
  offer_search: { limit: 0, windowMs: 60_000 },
  instance_create: { limit: 0, windowMs: 3_000 },
};

/** Limits as a start or the control API gives them: the service's, none, or some endpoints' own (the others unchanged). */
export type RateLimitChoice = "service" | "off" | Partial<RateLimitSettings>;

/** The limits a choice makes of `current`. */
export function chosenLimits(current: RateLimitSettings, choice: RateLimitChoice): RateLimitSettings {
  if (choice === "service") return structuredClone(DEFAULT_RATE_LIMITS);
  if (choice === "off") return structuredClone(NO_RATE_LIMITS);
  return { ...current, ...structuredClone(choice) };
}

/** Sliding-window counters, per endpoint and caller, on the emulator's clock. */
export class RateLimits {
  settings: RateLimitSettings = structuredClone(DEFAULT_RATE_LIMITS);
  /** Calls refused by the limits, per endpoint (the control API's state shows them). */
  readonly refused: Partial<Record<RateLimitedEndpoint, number>> = {};
  private readonly calls = new Map<string, number[]>();

  constructor(private readonly now: () => number) {}

  /** Applies a choice of limits (the calls counted so far still count). */
  choose(choice: RateLimitChoice): void {
    this.settings = chosenLimits(this.settings, choice);
  }

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
      this.refused[endpoint] = (this.refused[endpoint] ?? 0) + 1;
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
