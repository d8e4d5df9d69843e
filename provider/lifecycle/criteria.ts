import { z } from "zod";
import { OfferFilters, OfferFiltersInput, Order } from "../../sdk";
import type { EnumDescription, PropertyDescription } from "./description";

/**
 * The criteria that choose offers, as Instance, GpuFleet and getOffers declare them: one description and one check
 * of each (so a filter is validated the same wherever it is written), and the offer-search filters they stand for.
 */

const OFFER_TYPE: EnumDescription = {
  name: "OfferType",
  description: "The market an offer is rented in.",
  values: [
    { value: "on-demand", description: "At the offer's price, never interrupted." },
    { value: "ondemand", description: "The same as `on-demand`." },
    { value: "bid", description: "Interruptible, at the bid `price`: outbid, the instance is stopped." },
  ],
};

export const CRITERIA_INPUTS = {
  gpuModel: { type: "string", description: 'GPU model wanted, e.g. "RTX 4090" (a `gpu_name` filter).' },
  gpuCount: { type: "integer", description: "GPUs wanted on the machine (a `num_gpus` filter)." },
  filters: {
    type: "map",
    values: { type: "any" },
    tsType: "OfferFilters",
    description:
      "Any offer-search filters, `{ <field>: { <operator>: <value> } }` with the operators eq, neq, lt, lte, gt, gte, in and notin, e.g. " +
      "`{ reliability: { gte: 0.98 }, gpu_ram: { gte: 24000 } }`.",
  },
  order: {
    type: "array",
    items: { type: "array", items: { type: "string" } },
    tsType: '[string, "asc" | "desc"][]',
    description: 'Preference among matching offers, as `[field, "asc" | "desc"]` pairs. Default cheapest first: `[["dph_total", "asc"]]`.',
  },
  offerType: { type: "string", enum: OFFER_TYPE, tsType: "OfferType", default: "on-demand", description: "The market to rent in." },
  maxPricePerHour: { type: "number", description: "The most to pay, $/hour: offers above it are left out." },
} satisfies Record<string, PropertyDescription>;

/** The check of each criterion (the keys of CRITERIA_INPUTS). */
export const CriteriaFields = {
  /** Criteria sugar: `filters.gpu_name = {eq: gpuModel}`. */
  gpuModel: z.string().min(1).optional(),
  /** Criteria sugar: `filters.num_gpus = {eq: gpuCount}`. */
  gpuCount: z.number().int().positive().optional(),
  /** Checked against the fields the offer search knows (sdk/filter-check.ts): the service ignores the others. */
  filters: OfferFiltersInput.optional(),
  order: Order.optional(),
  /** `reserved` is left out: the API shows no way to accept an offer at its reserved price. */
  offerType: z.enum(["on-demand", "ondemand", "bid"]).optional(),
  maxPricePerHour: z.number().positive().optional(),
};

export type Criteria = z.infer<z.ZodObject<typeof CriteriaFields>>;

/** The offer-search filters of criteria: their filters, with the gpuModel/gpuCount sugar folded in. */
export function criteriaFilters(criteria: Pick<Criteria, "filters" | "gpuModel" | "gpuCount">): OfferFilters {
  const filters: OfferFilters = { ...criteria.filters };
  if (criteria.gpuModel) filters.gpu_name = { ...filters.gpu_name, eq: criteria.gpuModel };
  if (criteria.gpuCount) filters.num_gpus = { ...filters.num_gpus, eq: criteria.gpuCount };
  return filters;
}
