import { z } from "zod";
import { OfferFilters, OfferFiltersInput, Order } from "../../sdk";
import type { NamedType } from "./description";

/**
 * The criteria that choose offers, as Instance, GpuFleet, WorkerGroup and getOffers declare them: one declaration
 * and one check of each (so a filter is validated the same wherever it is written), and the offer-search filters
 * they stand for.
 */

const OFFER_TYPE: NamedType = {
  name: "OfferType",
  description: "The market an offer is rented in.",
  values: {
    "on-demand": "At the offer's price, never interrupted.",
    ondemand: "The same as `on-demand`.",
    bid: "Interruptible, at the bid `price`: outbid, the instance is stopped.",
  },
};

export const CriteriaFields = {
  /** Criteria sugar: `filters.gpu_name = {eq: gpuModel}`. */
  gpuModel: z.string().min(1).optional().meta({ description: 'GPU model wanted, e.g. "RTX 4090" (a `gpu_name` filter).' }),
  /** Criteria sugar: `filters.num_gpus = {eq: gpuCount}`. */
  gpuCount: z.number().int().positive().optional().meta({ description: "GPUs wanted on the machine (a `num_gpus` filter)." }),
  /** Checked against the fields the offer search knows (sdk/filter-check.ts): the service ignores the others. */
  filters: OfferFiltersInput.optional().meta({
    tsType: "OfferFilters",
    description:
      "Any offer-search filters, `{ <field>: { <operator>: <value> } }` with the operators eq, neq, lt, lte, gt, gte, in and notin, e.g. " +
      "`{ reliability: { gte: 0.98 }, gpu_ram: { gte: 24000 } }`.",
  }),
  order: Order.optional().meta({
    tsType: '[string, "asc" | "desc"][]',
    description: 'Preference among matching offers, as `[field, "asc" | "desc"]` pairs. Default cheapest first: `[["dph_total", "asc"]]`.',
  }),
  /** `reserved` is left out: the API shows no way to accept an offer at its reserved price. */
  offerType: z.enum(["on-demand", "ondemand", "bid"]).optional().meta({ named: OFFER_TYPE, tsType: "OfferType", default: "on-demand", description: "The market to rent in." }),
  maxPricePerHour: z.number().positive().optional().meta({ description: "The most to pay, $/hour: offers above it are left out." }),
};

export type Criteria = z.infer<z.ZodObject<typeof CriteriaFields>>;

/** The offer-search filters of criteria: their filters, with the gpuModel/gpuCount sugar folded in. */
export function criteriaFilters(criteria: Pick<Criteria, "filters" | "gpuModel" | "gpuCount">): OfferFilters {
  const filters: OfferFilters = { ...criteria.filters };
  if (criteria.gpuModel) filters.gpu_name = { ...filters.gpu_name, eq: criteria.gpuModel };
  if (criteria.gpuCount) filters.num_gpus = { ...filters.num_gpus, eq: criteria.gpuCount };
  return filters;
}
