import { z } from "zod";

/**
 * The account's own operations (docs/service-facts.md#account-changes, #account-history, #benchmarks,
 * #gpu-metrics): requests as the vendor's description names their fields; answers in every form the description
 * or the public client shows.
 */

/** `PUT /api/v0/commands/transfer_credit/`: `recipient` an email or a user id. */
export const TransferCreditRequest = z.object({
  sender: z.string().optional(),
  client_id: z.string().optional(),
  recipient: z.string().min(1).max(254).describe("The recipient account's email or user id."),
  amount: z.number().min(0.01).describe("Dollars of credit moved."),
});
export type TransferCreditRequest = z.infer<typeof TransferCreditRequest>;

/** `PUT /api/v0/users/`: the fields to set (the public client's list; the description names three). */
export const SetUserRequest = z.record(z.string().max(64), z.union([z.string(), z.number(), z.boolean(), z.null()]));
export type SetUserRequest = z.infer<typeof SetUserRequest>;

/** A row of `GET /api/v0/users/{id}/ipaddrs/`: the description's fields and the public client's. */
export const IpAddressRow = z.looseObject({
  ip_address: z.string().optional(),
  ip: z.string().optional(),
  timestamp: z.union([z.string(), z.number()]).optional(),
  first_seen: z.union([z.string(), z.number()]).optional(),
});
export type IpAddressRow = z.infer<typeof IpAddressRow>;
export const IpAddressesResponse = z.union([z.looseObject({ results: z.array(IpAddressRow) }), z.array(IpAddressRow)]);

/** A row of `GET /api/v0/audit_logs/` (its shape from the public client's `show audit-logs`). */
export const AuditLogRow = z.looseObject({
  ip_address: z.string().nullable().optional(),
  api_key_id: z.number().nullable().optional(),
  created_at: z.union([z.number(), z.string()]),
  api_route: z.string(),
  args: z.unknown().optional(),
});
export type AuditLogRow = z.infer<typeof AuditLogRow>;
export const AuditLogsResponse = z.union([z.array(AuditLogRow), z.looseObject({ results: z.array(AuditLogRow) }), z.looseObject({ audit_logs: z.array(AuditLogRow) })]);

/** A row of `GET /api/v0/benchmarks/`: `value` (the client's name) or `score` (the description's). */
export const BenchmarkRow = z.looseObject({
  id: z.number(),
  machine_id: z.number().optional(),
  gpu_name: z.string().optional(),
  num_gpus: z.number().optional(),
  value: z.number().optional(),
  score: z.number().optional(),
  last_update: z.number().optional(),
});
export type BenchmarkRow = z.infer<typeof BenchmarkRow>;
/** A page (the public client's form) or a bare list (the description's). */
export const BenchmarksResponse = z.union([
  z.looseObject({ benchmarks: z.array(BenchmarkRow), next_token: z.string().nullable().optional(), benchmarks_found: z.number().optional() }),
  z.array(BenchmarkRow),
]);

const Price = z.number().nullable();
/** A GPU model's row of `GET /api/v0/metrics/gpu/current/`. */
export const GpuMetricsRow = z.looseObject({
  gpu_name: z.string(),
  total: z.number().int(),
  available: z.number().int(),
  rented_verified: z.number().int().optional(),
  avail_verified: z.number().int().optional(),
  rented_unverified: z.number().int().optional(),
  avail_unverified: z.number().int().optional(),
  usage: z.number().optional(),
  dlperf: z.number().nullable().optional(),
  tflops: z.number().nullable().optional(),
  price_p10: Price.optional(),
  price_p25: Price.optional(),
  price_median: Price.optional(),
  price_p75: Price.optional(),
  price_p90: Price.optional(),
});
export type GpuMetricsRow = z.infer<typeof GpuMetricsRow>;
export const GpuMetricsResponse = z.looseObject({ success: z.boolean().optional(), gpus: z.array(GpuMetricsRow) });

const Series = z.array(z.number().nullable());
/** A GPU model's series in `GET /api/v0/metrics/gpu/history/` (epoch seconds; a point with no market is null). */
export const GpuHistory = z.looseObject({
  supply_demand: z.looseObject({ timestamps: z.array(z.number()), total: Series.optional(), rented_verified: Series.optional(), avail_verified: Series.optional() }).optional(),
  pricing: z.looseObject({ timestamps: z.array(z.number()), rented_median: Series.optional(), avail_median: Series.optional(), avail_p10: Series.optional(), avail_p90: Series.optional() }).optional(),
});
export type GpuHistory = z.infer<typeof GpuHistory>;
export const GpuHistoryResponse = z.looseObject({ success: z.boolean().optional(), gpus: z.record(z.string(), GpuHistory) });

/** A row of `GET /api/v0/metrics/gpu/locations/`. */
export const GpuLocation = z.looseObject({
  latitude: z.number().nullable().optional(),
  longitude: z.number().nullable().optional(),
  country_code: z.string().optional(),
  gpu_name: z.string(),
  rented: z.boolean().optional(),
  num_gpus: z.number().optional(),
});
export const GpuLocationsResponse = z.looseObject({ success: z.boolean().optional(), locations: z.array(GpuLocation) });
