import { z } from "zod";

/**
 * A row of `GET /api/v0/users/me/invoices/`: what one instance has cost so far (`type` `charge`), or a payment
 * into the account (`type` `payment`, no instance). `timestamp` is when it was last charged or paid.
 */
export const InvoiceItem = z.looseObject({
  /** The instance a charge is for; a payment has none. */
  instance_id: z.number().int().optional(),
  amount: z.number(),
  /** The period charged so far (a payment: its moment), epoch seconds. */
  start: z.number(),
  end: z.number(),
  type: z.enum(["charge", "payment"]).optional(),
  timestamp: z.number().optional(),
  description: z.string().optional(),
});
export type InvoiceItem = z.infer<typeof InvoiceItem>;

export const InvoicesResponse = z.looseObject({
  credit: z.number(),
  invoices: z.array(InvoiceItem),
  /** What is charged in the current period (the emulator bills as it goes: everything charged so far). */
  current: z.looseObject({ charges: z.number(), total: z.number() }).optional(),
});

/**
 * A row of the paged billing views, `GET /api/v0/charges/` (an instance's charges) and `GET /api/v1/invoices/`
 * (payments into the account), as the public Python client reads them.
 */
export const BillingRow = z.looseObject({
  type: z.string(),
  source: z.string().nullable(),
  description: z.string(),
  amount: z.number(),
  start: z.number(),
  end: z.number().nullable(),
  items: z.array(z.unknown()),
  metadata: z.record(z.string(), z.unknown()),
});
export const BillingPage = z.looseObject({
  results: z.array(BillingRow),
  count: z.number().int(),
  total: z.number().int(),
  next_token: z.string().nullable(),
});
