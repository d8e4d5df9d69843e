import { z } from "zod";

/** What one instance has cost so far (`GET /api/v0/users/me/invoices/`). */
export const InvoiceItem = z.looseObject({
  instance_id: z.number().int(),
  amount: z.number(),
  /** The period charged so far, epoch seconds. */
  start: z.number(),
  end: z.number(),
});
export type InvoiceItem = z.infer<typeof InvoiceItem>;

export const InvoicesResponse = z.looseObject({ credit: z.number(), invoices: z.array(InvoiceItem) });
