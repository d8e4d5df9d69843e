import { z } from "zod";
import type { InvoiceItem } from "../../sdk";
import { describeFunction } from "./describe";
import type { LookupFunction } from "./kind";
import { specOf } from "./spec";

/** The getInvoices function: the account's charges and payments, and its credit. Read-only. */

const GetInvoicesArgs = z
  .object({
    from: z.number().min(0).optional().meta({ description: "The period's start, seconds since 1970: rows (a charge's end, a payment's moment) from then on. Default: all." }),
    to: z.number().min(0).optional().meta({ description: "The period's end, seconds since 1970. Default: now." }),
  })
  .refine((period) => period.from === undefined || period.to === undefined || period.from <= period.to, { path: ["to"], message: "to is before from: the period ends before it begins" });
type GetInvoicesArgs = z.infer<typeof GetInvoicesArgs>;

const InvoiceSummary = z.object({
  type: z.string().meta({ description: "`charge` or `payment`." }),
  instanceId: z.int().nullable().meta({ description: "The instance a charge is for; null for a payment." }),
  amount: z.number().meta({ description: "$." }),
  start: z.number().meta({ description: "When the period charged began (a payment: its moment), seconds since 1970." }),
  end: z.number().meta({ description: "When it ended, seconds since 1970." }),
  description: z.string().nullable().meta({ description: "The service's words for it." }),
});
export type InvoiceSummary = z.infer<typeof InvoiceSummary>;

const Result = z.object({
  credit: z.number().meta({ description: "The credit left, $ (now, whatever the period)." }),
  charged: z.number().meta({ description: "The sum of the period's charges, $." }),
  items: z.array(InvoiceSummary).meta({
    named: { name: "InvoiceItem", description: "What one instance has cost so far (a charge), or a payment into the account." },
    description: "Each charge and payment, oldest first.",
  }),
});

export const GET_INVOICES: LookupFunction<GetInvoicesArgs, z.infer<typeof Result>> = {
  description: describeFunction({
    name: "getInvoices",
    description:
      "The account's billing at the time of the call: its credit, what its instances have cost so far, and each charge and payment, " +
      "oldest first; within a period when `from` or `to` says (a charge counts by its end).",
    args: GetInvoicesArgs,
    result: Result,
    example: { args: {}, exports: "charged" },
  }),
  args: specOf("getInvoices", GetInvoicesArgs),
  async invoke(args, op) {
    const { credit, invoices } = await op.client.billing.invoices({ from: args.from, to: args.to });
    const items = invoices.map(summaryOf).sort((a, b) => a.start - b.start);
    const charged = items.filter((item) => item.type === "charge").reduce((sum, item) => sum + item.amount, 0);
    return { credit, charged, items };
  },
};

/** A row as the function shows it: a row without `type` is a charge when it names an instance. */
function summaryOf(item: InvoiceItem): InvoiceSummary {
  const type = item.type ?? (item.instance_id === undefined ? "payment" : "charge");
  return { type, instanceId: item.instance_id ?? null, amount: item.amount, start: item.start, end: item.end, description: item.description ?? null };
}
