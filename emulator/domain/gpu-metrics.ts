import type { Offer } from "../../sdk/schemas";

/** An offer of the market and whether it is rented now. */
export interface MarketRow {
  offer: Offer;
  rented: boolean;
}

/** What `verified` and `hosting_type` keep (the description's parameters); `num_gpus` an exact count. */
export interface MetricsFilter {
  verified?: "yes" | "no" | "all";
  hostingType?: "all" | "secure_cloud" | "community";
  numGpus?: number;
}

/**
 * The market's GPU metrics (docs/service-facts.md#gpu-metrics): per GPU model, machines rented and available
 * (verified or not), and the price per GPU-hour's percentiles over the available offers and the rented ones. Read
 * from the emulator's own offers, so the prices move as offers are rented: the cheap ones go first.
 */
export function currentMetrics(rows: MarketRow[], filter: MetricsFilter = {}) {
  return [...byModel(rows.filter((r) => keeps(r.offer, filter))).entries()].sort(([a], [b]) => a.localeCompare(b)).map(([gpuName, group]) => {
    const count = (rented: boolean, verified: boolean) => group.filter((r) => r.rented === rented && isVerified(r.offer) === verified).length;
    const available = group.filter((r) => !r.rented);
    const prices = sorted(available.map((r) => perGpuHour(r.offer)));
    const all = group.length;
    const tflops = mean(group.map((r) => Number(r.offer.total_flops ?? 0) / Math.max(1, r.offer.num_gpus)));
    const dlperf = mean(group.map((r) => Number(r.offer.dlperf ?? 0) / Math.max(1, r.offer.num_gpus)));
    const median = percentile(prices, 0.5);
    return {
      gpu_name: gpuName,
      total: all,
      available: available.length,
      rented_verified: count(true, true),
      avail_verified: count(false, true),
      rented_unverified: count(true, false),
      avail_unverified: count(false, false),
      usage: round(all ? (100 * (all - available.length)) / all : 0, 2),
      dlperf: round(dlperf, 2),
      tflops: round(tflops, 2),
      price_p10: percentile(prices, 0.1),
      price_p25: percentile(prices, 0.25),
      price_median: median,
      price_p75: percentile(prices, 0.75),
      price_p90: percentile(prices, 0.9),
      tflops_per_dollar: median ? round(tflops / median, 2) : null,
      dlperf_per_dollar: median ? round(dlperf / median, 2) : null,
    };
  });
}

/** A GPU model's counts and price percentiles ($/GPU-hour) at one time, in this order: what the history shows of it. */
const FIELDS = [
  "rented_verified", "avail_verified", "rented_unverified", "avail_unverified", "total",
  "rented_p10", "rented_median", "rented_p90", "avail_p10", "avail_median", "avail_p90",
] as const;
type Field = (typeof FIELDS)[number];
/** The counts (the history's `supply_demand`) and the percentiles (its `pricing`). */
const SUPPLY_FIELDS = FIELDS.slice(0, 5);
const PRICE_FIELDS = FIELDS.slice(5);

/**
 * One sample of the market for the history: its figures only, not the offers' prices. Kept as numbers in a row
 * (a model's FIELDS one after the other, NaN for a percentile of no offers) rather than an object per model: the
 * history holds many samples, and an object per model and sample cost the emulator more than its offers.
 */
interface MetricsSample {
  at: number;
  /** The models sampled, in order; consecutive samples of the same models share one list. */
  models: readonly string[];
  figures: number[];
}

/** Samples kept: the oldest go first (a long run's history thins out at its start). */
const MAX_SAMPLES = 2000;

/**
 * The market over the emulator's clock: sampled as it was before each change (an offer rented or given back) and
 * at each look, so that the history answers what the market was at any time since the start. Not saved. A change
 * is only marked: the market is read when a later change or a look needs the figures, once per whole second at
 * most (the history is asked at whole seconds), not at every rental.
 */
export class MarketHistory {
  private readonly samples: MetricsSample[] = [];
  /** When the market last changed (epoch ms), if no sample holds it yet. */
  private changedAt?: number;

  constructor(private readonly rows: () => MarketRow[]) {}

  /** The market is about to change at `now`: as it is now, it is what the history shows since it last changed. */
  changing(now: number): void {
    if (this.changedAt !== undefined && wholeSecond(this.changedAt) !== wholeSecond(now)) this.flush();
  }

  /** The market changed at `now`. */
  changed(now: number): void {
    this.changedAt = now;
  }

  /** A look at the market at `now` (the history asked, the market restored): it is sampled. */
  sample(now: number): void {
    this.flush();
    this.take(now, figuresOf(this.rows()));
  }

  private flush(): void {
    if (this.changedAt === undefined) return;
    this.take(this.changedAt, figuresOf(this.rows()));
    this.changedAt = undefined;
  }

  /** Keeps the figures as the market's at `at` (epoch ms) unless the last sample has the same. */
  private take(at: number, { models, figures }: { models: string[]; figures: number[] }): void {
    const last = this.samples.at(-1);
    if (last && sameList(last.models, models) && sameList(last.figures, figures)) return;
    // A sample with no whole second between it and the next is never shown.
    if (last && wholeSecond(last.at) === wholeSecond(at)) this.samples.pop();
    const previous = this.samples.at(-1);
    this.samples.push({ at, models: previous && sameList(previous.models, models) ? previous.models : models, figures });
    if (this.samples.length > MAX_SAMPLES) this.samples.splice(0, this.samples.length - MAX_SAMPLES);
  }

  /**
   * `GET /api/v0/metrics/gpu/history/`: for each model asked (all without), series at `step` seconds from
   * `start` to `end` (epoch seconds), each point the market as it was then.
   */
  history(models: string[] | undefined, range: { start: number; end: number; step: number }) {
    const times: number[] = [];
    for (let t = range.start; t <= range.end && times.length < MAX_POINTS; t += range.step) times.push(t);
    const at = times.map((t) => this.at(t * 1000));
    const names = models ?? [...new Set(at.flatMap((s) => s?.models ?? []))].sort();
    const gpus: Record<string, unknown> = {};
    for (const name of names) {
      const points = at.map((s) => ({ sample: s, row: s ? s.models.indexOf(name) : -1 }));
      const series = (field: Field) => points.map(({ sample, row }) => (sample && row >= 0 ? figureOrNull(sample.figures[row * FIELDS.length + FIELDS.indexOf(field)]) : null));
      const part = (fields: readonly Field[]) => ({ timestamps: times, ...Object.fromEntries(fields.map((field) => [field, series(field)])) });
      gpus[name] = { supply_demand: part(SUPPLY_FIELDS), pricing: part(PRICE_FIELDS) };
    }
    return gpus;
  }

  /** The sample in force at `ms`: the last taken at or before it (samples are in time order). */
  private at(ms: number): MetricsSample | undefined {
    let [low, high] = [0, this.samples.length - 1];
    let found: MetricsSample | undefined;
    while (low <= high) {
      const mid = (low + high) >> 1;
      if (this.samples[mid].at <= ms) {
        found = this.samples[mid];
        low = mid + 1;
      } else high = mid - 1;
    }
    return found;
  }
}

/** Points a history answers at most (the description's default is about 20 over a day). */
const MAX_POINTS = 1000;

/** Where the market's machines are (`GET /api/v0/metrics/gpu/locations/`): one row per offer. */
export function locations(rows: MarketRow[]) {
  return rows.map(({ offer, rented }) => {
    const [city, country] = String(offer.geolocation ?? "").split(",").map((s) => s.trim());
    const place = PLACES[country ?? city] ?? { latitude: 0, longitude: 0 };
    return { ...place, city: country ? city : "", country_code: country ?? city ?? "", gpu_name: offer.gpu_name, rented, verified: isVerified(offer), datacenter: offer.hosting_type === 1, num_gpus: offer.num_gpus };
  });
}

/** A country's rough middle, for the map (the emulator's offers name a region and a country only). */
const PLACES: Record<string, { latitude: number; longitude: number }> = {
  US: { latitude: 39.8, longitude: -98.6 }, CA: { latitude: 56.1, longitude: -106.3 }, DE: { latitude: 51.2, longitude: 10.4 },
  FR: { latitude: 46.2, longitude: 2.2 }, GB: { latitude: 55.4, longitude: -3.4 }, NL: { latitude: 52.1, longitude: 5.3 },
  SE: { latitude: 60.1, longitude: 18.6 }, FI: { latitude: 61.9, longitude: 25.7 }, JP: { latitude: 36.2, longitude: 138.3 },
  KR: { latitude: 35.9, longitude: 127.8 }, SG: { latitude: 1.35, longitude: 103.8 }, AU: { latitude: -25.3, longitude: 133.8 },
  PL: { latitude: 51.9, longitude: 19.1 }, NO: { latitude: 60.5, longitude: 8.5 }, CZ: { latitude: 49.8, longitude: 15.5 },
};

/** The market's figures per GPU model (in the order the offers name them), FIELDS after FIELDS. */
function figuresOf(rows: MarketRow[]): { models: string[]; figures: number[] } {
  const groups = byModel(rows);
  const figures: number[] = [];
  for (const group of groups.values()) {
    // counts: rented verified, available verified, rented unverified, available unverified, total (FIELDS' order).
    const counts = [0, 0, 0, 0, group.length];
    const prices: [number[], number[]] = [[], []];
    for (const { offer, rented } of group) {
      counts[(rented ? 0 : 1) + (isVerified(offer) ? 0 : 2)]++;
      prices[rented ? 0 : 1].push(perGpuHour(offer));
    }
    figures.push(...counts);
    for (const side of prices.map(sorted)) for (const p of [0.1, 0.5, 0.9]) figures.push(percentile(side, p) ?? NaN);
  }
  return { models: [...groups.keys()], figures };
}

/** The rows by GPU model, in the order the offers name the models. */
function byModel(rows: MarketRow[]): Map<string, MarketRow[]> {
  const groups = new Map<string, MarketRow[]>();
  for (const row of rows) {
    const group = groups.get(row.offer.gpu_name);
    if (group) group.push(row);
    else groups.set(row.offer.gpu_name, [row]);
  }
  return groups;
}

/** The first whole second (epoch s) at or after `ms`: the history's first point that can show a sample taken then. */
const wholeSecond = (ms: number) => Math.ceil(ms / 1000);

const figureOrNull = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? null : value);

/** Whether two lists hold the same values (NaN the same as NaN). */
function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((value, i) => Object.is(value, b[i]));
}

function keeps(offer: Offer, filter: MetricsFilter): boolean {
  if (filter.verified === "yes" && !isVerified(offer)) return false;
  if (filter.verified === "no" && isVerified(offer)) return false;
  if (filter.hostingType === "secure_cloud" && offer.hosting_type !== 1) return false;
  if (filter.hostingType === "community" && offer.hosting_type === 1) return false;
  if (filter.numGpus !== undefined && offer.num_gpus !== filter.numGpus) return false;
  return true;
}

const isVerified = (offer: Offer) => offer.verification === "verified" || (offer.verification === undefined && offer.verified === true);
const perGpuHour = (offer: Offer) => Number(offer.dph_base ?? offer.dph_total) / Math.max(1, offer.num_gpus);
const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const round = (value: number, places = 4) => Number(value.toFixed(places));
const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);

/** The `p` percentile of sorted values (nearest rank); null for none. */
function percentile(values: number[], p: number): number | null {
  if (!values.length) return null;
  return round(values[Math.min(values.length - 1, Math.max(0, Math.ceil(p * values.length) - 1))]);
}
