import { FastifyInstance } from "fastify";
import { z } from "zod";
import { BillingPage, FieldType, InvoicesResponse, typedFilters } from "../../sdk/schemas";
import type { UserRecord } from "../domain/records";
import { search } from "../domain/filters";
import { Marketplace } from "../domain/marketplace";
import { jsonEncoded, queryFlag } from "./accepting";
import { AfterToken, pageOf } from "./paging";
import { route } from "./routes";

const round6 = (n: number) => Number(n.toFixed(6));
const HOUR_S = 3600;

/** The filter fields of `GET /api/v0/charges/` (`day`: when it was last charged) and `GET /api/v1/invoices/`. */
const CHARGE_FIELDS: Record<string, FieldType> = { day: "number", type: "string", source: "string", amount: "number" };
const INVOICE_FIELDS: Record<string, FieldType> = { when: "number", type: "string", service: "string", source: "string", amount: "number" };

/** A page of the paged billing views holds at most this many rows. */
const BILLING_PAGE = 100;

const pagedQuery = (fields: Record<string, FieldType>) =>
  z.object({
    select_filters: jsonEncoded(z.object(typedFilters(fields)).catchall(z.unknown()), {}).optional(),
    latest_first: queryFlag.optional(),
    /** At most 100 rows a page; more is read as 100. */
    limit: z.number().int().positive().optional(),
    after_token: AfterToken.optional(),
    format: z.enum(["table", "tree"]).optional(),
  });

/**
 * `GET /api/v0/users/me/invoices/` (the deprecated view the public Python client's `show invoices` reads):
 * `sdate`/`edate` bound the rows by `timestamp` (epoch seconds); `inc_charges=false` leaves out the charges.
 */
const InvoicesQuery = z.object({ sdate: z.number().optional(), edate: z.number().optional(), inc_charges: queryFlag.optional() });

/** Billing, behind the `billing` category: the invoices view and the paged charges and invoices. */
export function registerBilling(app: FastifyInstance, market: Marketplace): void {
  /**
   * The user's charges (one row per instance, the period charged so far; one row for the destroyed instances
   * beyond the latest the ledger itemizes, `instanceId` absent) and payments (the opening credit).
   */
  const ledger = (user: UserRecord) => {
    market.settle();
    type Source = { instanceId?: number; volumeId?: number };
    const row = (source: Source, description: string, item: { amount: number; from: number; to: number }) => {
      const [start, end] = [item.from / 1000, item.to / 1000];
      return { ...source, description, amount: round6(item.amount), start, end, hours: Math.max(end - start, 0) / HOUR_S };
    };
    const earlier = market.billing.earlierOf(user.id);
    const charges = [
      ...(earlier ? [row({}, `${earlier.instances} earlier destroyed instances: compute and disk`, earlier)] : []),
      ...market.billing.itemsOf(user.id).map((item) =>
        item.volume
          ? row({ volumeId: item.instanceId }, `Volume ${item.instanceId}: storage`, item)
          : row({ instanceId: item.instanceId }, `Instance ${item.instanceId}: compute and disk`, item),
      ),
    ];
    const opened = (user.createdAt ?? 0) / 1000;
    const payment = { amount: round6(market.billing.openingCredit(user.id, user.credit)), at: opened };
    return { charges, payment };
  };

  route(app, market, {
    method: "GET",
    url: "/api/v0/users/me/invoices/",
    permission: "billing",
    query: InvoicesQuery,
    response: InvoicesResponse,
    handler: ({ principal, query }) => {
      const { charges, payment } = ledger(principal.user);
      const rows = [
        {
          type: "payment" as const, amount: payment.amount, start: payment.at, end: payment.at,
          timestamp: payment.at, description: "Credit at account opening", quantity: 1, rate: payment.amount,
        },
        ...(query.inc_charges === false ? [] : charges).map((c) => ({
          id: c.instanceId ?? c.volumeId, type: "charge" as const, instance_id: c.instanceId, amount: c.amount, start: c.start, end: c.end,
          timestamp: c.end, description: c.description, quantity: round6(c.hours),
          rate: c.hours > 0 ? round6(c.amount / c.hours) : 0,
        })),
      ].filter((row) => (query.sdate === undefined || row.timestamp >= query.sdate) && (query.edate === undefined || row.timestamp <= query.edate));
      const charged = round6(charges.reduce((sum, c) => sum + c.amount, 0));
      return { credit: round6(principal.user.credit), current: { charges: charged, total: charged }, invoices: rows };
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v0/charges/",
    permission: "billing",
    query: pagedQuery(CHARGE_FIELDS),
    response: BillingPage,
    handler: ({ principal, query }) => {
      const rows = ledger(principal.user).charges.map((c) => ({
        type: c.volumeId === undefined ? "instance" : "volume", source: String(c.instanceId ?? c.volumeId ?? "earlier instances"),
        description: c.description, amount: c.amount, start: c.start, end: c.end, items: [], day: c.end,
        metadata: c.volumeId !== undefined ? { volume_id: c.volumeId } : c.instanceId === undefined ? {} : { instance_id: c.instanceId },
      }));
      return paged(rows, query, CHARGE_FIELDS, "day");
    },
  });

  route(app, market, {
    method: "GET",
    url: "/api/v1/invoices/",
    permission: "billing",
    query: pagedQuery(INVOICE_FIELDS),
    response: BillingPage,
    handler: ({ principal, query }) => {
      const { payment } = ledger(principal.user);
      const rows = [
        {
          // Money into the account is negative in this view (the public Python client shows it so, as a credit).
          type: "credit", source: "emulator", service: "emulator", description: "Credit at account opening", amount: -payment.amount,
          start: payment.at, end: payment.at, items: [], metadata: { invoice_id: principal.user.id, service: "emulator" }, when: payment.at,
        },
      ];
      return paged(rows, query, INVOICE_FIELDS, "when");
    },
  });
}

/** One page of billing rows: filtered, in time order (`latest_first`: newest first), without the filter-only field. */
function paged<R extends Record<string, unknown>>(
  rows: R[],
  query: { select_filters?: Record<string, unknown>; latest_first?: boolean; limit?: number; after_token?: string },
  fields: Record<string, FieldType>,
  timeField: keyof R & string,
) {
  const order: [string, "asc" | "desc"][] = [[timeField, query.latest_first ? "desc" : "asc"]];
  const found = search(rows, { filters: query.select_filters ?? {}, order, limit: rows.length }, fields, { defaultLimit: rows.length, maxLimit: rows.length });
  const page = pageOf(found, query.after_token, Math.min(query.limit ?? 20, BILLING_PAGE));
  const results = page.rows.map(({ [timeField]: _time, ...row }) => row);
  return { success: true, results, count: results.length, total: found.length, next_token: page.next_token };
}
