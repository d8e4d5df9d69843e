import { FastifyInstance } from "fastify";
import { z } from "zod";
import {
  AuditLogsResponse,
  BenchmarksResponse,
  GpuHistoryResponse,
  GpuLocationsResponse,
  GpuMetricsResponse,
  IpAddressesResponse,
  SetUserRequest,
  sortableField,
  SortDirection,
  SuccessResponse,
  TransferCreditRequest,
  typedFilters,
} from "../../sdk/schemas";
import { transferCredit, setUser } from "../domain/account-changes";
import { BENCHMARK_FIELDS, benchmarkRows } from "../domain/benchmarks";
import { forbidden } from "../domain/errors";
import { search } from "../domain/filters";
import { currentMetrics, locations } from "../domain/gpu-metrics";
import { Marketplace } from "../domain/marketplace";
import { jsonEncoded } from "./accepting";
import { AfterToken, pageOf } from "./paging";
import { route } from "./routes";
import { auditLogView, ipAddressesView } from "./views/account";

/** A page of benchmarks holds at most this many (the public client's note: the service's cap). */
const BENCHMARK_PAGE = 200;

const BenchmarksQuery = z.object({
  select_filters: jsonEncoded(z.object(typedFilters(BENCHMARK_FIELDS)).catchall(z.unknown()), {}).optional(),
  order_by: jsonEncoded(z.array(z.union([z.object({ col: sortableField(BENCHMARK_FIELDS), dir: SortDirection }), z.tuple([sortableField(BENCHMARK_FIELDS), SortDirection])])), []).optional(),
  limit: z.number().int().positive().optional(),
  after_token: AfterToken.optional(),
});

const MetricsQuery = z.object({
  verified: z.enum(["yes", "no", "all"]).optional(),
  hosting_type: z.enum(["all", "secure_cloud", "community"]).optional(),
  num_gpus: z.string().regex(/^\d{1,3}$/).optional(),
});

/** The history's default range: the last day, about twenty points (the description's). */
const DAY_SECONDS = 86_400;
const HistoryQuery = MetricsQuery.extend({
  gpu_name: z.string().max(200).optional(),
  start: z.number().int().nonnegative().optional(),
  end: z.number().int().nonnegative().optional(),
  step: z.number().int().min(1).optional(),
});

/**
 * The account's own operations and what the market shows it (docs/service-facts.md#account-changes,
 * #account-history, #benchmarks, #gpu-metrics): credit transfers, its details, its history of addresses and
 * actions, the market's benchmarks and GPU metrics.
 */
export function registerAccount(app: FastifyInstance, market: Marketplace): void {
  route(app, market, {
    method: "PUT",
    url: "/api/v0/commands/transfer_credit/",
    rules: "a recipient no account is (invalid_recipient), more than the credit (insufficient_balance)",
    permission: "billing",
    body: TransferCreditRequest,
    response: SuccessResponse,
    handler: ({ principal, body }) => {
      market.settle();
      const before = principal.user.credit;
      const recipient = transferCredit(principal.user, body.recipient, body.amount, () => market.accounts.allUsers());
      market.webhooks.creditChanged(principal.user, before, principal.user.credit);
      market.webhooks.creditChanged(recipient, recipient.credit - body.amount, recipient.credit);
      return { success: true, msg: `Sent ${body.amount} to ${body.recipient}` };
    },
  });

  route(app, market, {
    method: "PUT",
    url: "/api/v0/users/",
    rules: "a field a user does not set (nonexistent_key), empty, too long or with control characters (empty_input, input_too_long, invalid_characters)",
    permission: "user_write",
    body: SetUserRequest,
    response: SuccessResponse,
    handler: ({ principal, body }) => {
      setUser(principal.user, body);
      return { success: true };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/users/:user_id/ipaddrs/",
    permission: "user_read",
    response: IpAddressesResponse,
    handler: ({ principal, params }) => {
      if (params.user_id !== "me" && params.user_id !== String(principal.user.id)) throw forbidden("not_authorized", "Only your own account's addresses (user_id me).");
      return { success: true, results: ipAddressesView(principal.user) };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/audit_logs/",
    permission: "user_read",
    response: AuditLogsResponse,
    handler: ({ principal }) => auditLogView(principal.user, market.auditLog.of(principal.user.id)),
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/benchmarks/",
    query: BenchmarksQuery,
    permission: "misc",
    response: BenchmarksResponse,
    handler: ({ query }) => {
      const rows = benchmarkRows(market.market.allOffers());
      const order = (query.order_by ?? []).map((o) => (Array.isArray(o) ? o : [o.col, o.dir]) as [string, "asc" | "desc"]);
      const matching = search(rows, { filters: query.select_filters ?? {}, order: order.length ? order : [["id", "asc"]], limit: rows.length }, BENCHMARK_FIELDS, { defaultLimit: rows.length, maxLimit: rows.length });
      const page = pageOf(matching, query.after_token, Math.min(query.limit ?? BENCHMARK_PAGE, BENCHMARK_PAGE));
      return { success: true, benchmarks: page.rows, benchmarks_found: matching.length, next_token: page.next_token };
    },
  });

  const filterOf = (query: z.infer<typeof MetricsQuery>) => ({
    verified: query.verified,
    hostingType: query.hosting_type,
    numGpus: query.num_gpus === undefined ? undefined : Number(query.num_gpus),
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/metrics/gpu/current/",
    query: MetricsQuery,
    permission: "misc",
    response: GpuMetricsResponse,
    handler: ({ query }) => ({ success: true, gpus: currentMetrics(market.marketRows(), filterOf(query)) }),
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/metrics/gpu/history/",
    query: HistoryQuery,
    permission: "misc",
    response: GpuHistoryResponse,
    handler: ({ query }) => {
      const end = query.end ?? market.clock.nowSeconds();
      const start = query.start ?? end - DAY_SECONDS;
      const step = query.step ?? Math.max(1, Math.ceil((end - start) / 20));
      market.sampleMarket();
      const models = query.gpu_name?.split(",").map((name) => name.trim().replace(/_/g, " ")).filter(Boolean);
      return { success: true, gpus: market.marketHistory.history(models, { start, end: Math.max(start, end), step }) };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/metrics/gpu/locations/",
    permission: "misc",
    response: GpuLocationsResponse,
    handler: () => ({ success: true, locations: locations(market.marketRows()) }),
  });
}
