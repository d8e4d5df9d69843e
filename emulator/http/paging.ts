import { z } from "zod";

/**
 * Paged listings (`GET /api/v1/instances/`, `GET /api/v0/charges/`, `GET /api/v1/invoices/`): `limit` rows a
 * page; `next_token` names the next page, and comes back as `after_token`. A token is the count of rows before
 * the page, so it needs no state on the emulator; it is opaque to clients.
 */
export const AfterToken = z.string().regex(/^\d{1,9}$/, "an after_token is the next_token of the page before");

export function pageOf<T>(rows: readonly T[], afterToken: string | undefined, limit: number): { rows: T[]; next_token: string | null } {
  const from = Number(afterToken ?? 0);
  const to = from + limit;
  return { rows: rows.slice(from, to), next_token: to < rows.length ? String(to) : null };
}
