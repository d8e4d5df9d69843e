import type { Caller } from "./call";
import { BenchmarkRow, BenchmarksResponse, GpuHistory, GpuHistoryResponse, GpuLocationsResponse, GpuMetricsResponse, GpuMetricsRow } from "./schemas";

/** Which machines the GPU metrics count (the service's parameters). */
export interface GpuMetricsFilter {
  verified?: "yes" | "no" | "all";
  hostingType?: "all" | "secure_cloud" | "community";
  numGpus?: number;
}

/** A GPU model's prices per GPU-hour: now (over the available offers), and their history. */
export interface GpuPrices {
  gpuName: string;
  /** Now: the available offers' price percentiles, and how many are available of how many. */
  current: { p10: number | null; median: number | null; p90: number | null; available: number; total: number } | null;
  /** Points in time (epoch seconds) with the available and rented offers' median then (null: no market then). */
  history: { time: number; availableMedian: number | null; rentedMedian: number | null }[];
}

/** `client.benchmarks`: the market's machines' benchmark results. */
export function benchmarksApi(client: Caller) {
  return {
    /** Every page of `select_filters` (the service's filter form, e.g. `{gpu_name: {eq: "RTX 4090"}}`). */
    search: async (filters: Record<string, unknown> = {}): Promise<BenchmarkRow[]> => {
      const rows: BenchmarkRow[] = [];
      let after: string | null | undefined;
      do {
        const query = new URLSearchParams({ select_filters: JSON.stringify(filters), ...(after && { after_token: after }) });
        const answer = await client.call({ method: "GET", path: `/api/v0/benchmarks/?${query}`, schema: BenchmarksResponse });
        if (Array.isArray(answer)) return answer;
        rows.push(...answer.benchmarks);
        after = answer.next_token;
      } while (after);
      return rows;
    },
  };
}

/** `client.gpuMetrics`: supply, demand and prices of the market's GPU models. */
export function gpuMetricsApi(client: Caller) {
  const params = (filter: GpuMetricsFilter) => ({
    ...(filter.verified && { verified: filter.verified }),
    ...(filter.hostingType && { hosting_type: filter.hostingType }),
    ...(filter.numGpus !== undefined && { num_gpus: String(filter.numGpus) }),
  });
  const current = async (filter: GpuMetricsFilter = {}): Promise<GpuMetricsRow[]> =>
    (await client.call({ method: "GET", path: `/api/v0/metrics/gpu/current/?${new URLSearchParams(params(filter))}`, schema: GpuMetricsResponse })).gpus;
  const history = async (gpuNames: string[] = [], range: { start?: number; end?: number; step?: number } & GpuMetricsFilter = {}): Promise<Record<string, GpuHistory>> => {
    const query = new URLSearchParams({
      ...params(range),
      ...(gpuNames.length && { gpu_name: gpuNames.join(",") }),
      ...(range.start !== undefined && { start: String(range.start) }),
      ...(range.end !== undefined && { end: String(range.end) }),
      ...(range.step !== undefined && { step: String(range.step) }),
    });
    return (await client.call({ method: "GET", path: `/api/v0/metrics/gpu/history/?${query}`, schema: GpuHistoryResponse })).gpus;
  };
  return {
    current,
    history,
    locations: async () => (await client.call({ method: "GET", path: "/api/v0/metrics/gpu/locations/", schema: GpuLocationsResponse })).locations,
    /** A GPU model's prices now and over a period (default the last day), for choosing a bid. */
    prices: async (gpuName: string, range: { start?: number; end?: number; step?: number } & GpuMetricsFilter = {}): Promise<GpuPrices> => {
      const [rows, series] = await Promise.all([current(range), history([gpuName], range)]);
      const row = rows.find((r) => r.gpu_name === gpuName);
      const model = series[gpuName];
      const pricing = model?.pricing;
      return {
        gpuName,
        current: row ? { p10: row.price_p10 ?? null, median: row.price_median ?? null, p90: row.price_p90 ?? null, available: row.available, total: row.total } : null,
        history: (pricing?.timestamps ?? []).map((time, i) => ({ time, availableMedian: pricing?.avail_median?.[i] ?? null, rentedMedian: pricing?.rented_median?.[i] ?? null })),
      };
    },
  };
}
