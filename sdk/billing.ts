import type { Caller } from "./call";
import { InvoicesResponse } from "./schemas";

/** The user's credit and what each instance has cost. Needs a key with the `billing` permission. */
function listInvoices(client: Caller) {
  return client.call({ method: "GET", path: "/api/v0/users/me/invoices/", schema: InvoicesResponse });
}

/** `client.billing`. */
export function billingApi(client: Caller) {
  return {
    invoices: () => listInvoices(client),
  };
}
