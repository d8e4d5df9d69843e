import type { FieldFilter } from "./schemas";

/** Operators on a numeric field; several combine (AND): `{ gte: 24000, lte: 81920 }`. */
export interface NumberFilter {
  eq?: number;
  neq?: number;
  lt?: number;
  lte?: number;
  gt?: number;
  gte?: number;
  in?: number[];
  notin?: number[];
}

/** Operators on a text field. */
export interface TextFilter {
  eq?: string;
  neq?: string;
  in?: string[];
  notin?: string[];
}

export interface FlagFilter {
  eq?: boolean;
  neq?: boolean;
}

/**
 * Filters of the offer search (`POST /api/v0/bundles/`), by field, with the units the service uses. Fields not
 * listed here can be filtered too (the market ignores fields it does not know).
 */
export interface OfferFilters {
  /** GPU model, e.g. `{ in: ["RTX 4090", "RTX 3090"] }`. */
  gpu_name?: TextFilter;
  /** GPUs in the offer. */
  num_gpus?: NumberFilter;
  /** Memory per GPU, MB (24 GB = 24000). */
  gpu_ram?: NumberFilter;
  /** Memory of all GPUs together, MB. */
  gpu_total_ram?: NumberFilter;
  /** Host memory, MB. */
  cpu_ram?: NumberFilter;
  cpu_cores?: NumberFilter;
  cpu_cores_effective?: NumberFilter;
  /** Free disk, GB. */
  disk_space?: NumberFilter;
  /** Disk bandwidth, MB/s. */
  disk_bw?: NumberFilter;
  /** Network, Mb/s. */
  inet_up?: NumberFilter;
  inet_down?: NumberFilter;
  /** Host reliability, a fraction 0..1. */
  reliability?: NumberFilter;
  reliability2?: NumberFilter;
  /** Total price, $/hour. */
  dph_total?: NumberFilter;
  /** Lowest bid accepted for an interruptible rental, $/hour. */
  min_bid?: NumberFilter;
  /** Deep-learning performance score, and per $/hour. */
  dlperf?: NumberFilter;
  dlperf_per_dphtotal?: NumberFilter;
  /** Highest CUDA version the driver supports, e.g. 12.4. */
  cuda_max_good?: NumberFilter;
  /** Ports reachable directly (at least 1 for direct SSH). */
  direct_port_count?: NumberFilter;
  /** PCIe bandwidth, GB/s. */
  pcie_bw?: NumberFilter;
  /** Longest rental the host allows, seconds. */
  duration?: NumberFilter;
  /** `"City, CC"`; filter by country with `{ in: ["US", "CA"] }` on the two-letter code at its end. */
  geolocation?: TextFilter;
  verified?: FlagFilter;
  /** `verified`, `unverified` or `deverified`. */
  verification?: TextFilter;
  rentable?: FlagFilter;
  external?: FlagFilter;
  machine_id?: NumberFilter;
  host_id?: NumberFilter;
  id?: NumberFilter;
  [field: string]: FieldFilter | undefined;
}
