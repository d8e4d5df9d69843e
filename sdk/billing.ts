import type { Caller } from "./call";
import { InvoicesResponse } from "./schemas";

/** A period of the billing, epoch seconds (either end open): rows whose time (a charge's end, a payment's moment) is within. */
export interface BillingPeriod {
  from?: number;
  to?: number;
}

/** The user's credit and what each instance has cost. Needs a key with the `billing` permission. */
function listInvoices(client: Caller, period: BillingPeriod = {}) {
  const query = new URLSearchParams({
    ...(period.from !== undefined && { sdate: String(period.from) }),
    ...(period.to !== undefined && { edate: String(period.to) }),
  }).toString();
  return client.call({ method: "GET", path: `/api/v0/users/me/invoices/${query ? `?${query}` : ""}`, schema: InvoicesResponse });
}

/** `client.billing`. */
export function billingApi(client: Caller) {
  return {
    invoices: (period?: BillingPeriod) => listInvoices(client, period),
  };
}
