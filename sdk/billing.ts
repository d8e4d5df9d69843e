import type { GpuRentalClient } from "./client";
import { InvoicesResponse } from "./schemas";

/** The user's credit and what each instance has cost. Needs a key with the `billing` permission. */
export function listInvoices(client: GpuRentalClient) {
  return client.call({ method: "GET", path: "/api/v0/users/me/invoices/", schema: InvoicesResponse });
}
