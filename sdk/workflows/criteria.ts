import type { OfferQuery } from "../client";
import type { OfferFilters } from "../offer-filters";
import type { OfferType, Order } from "../schemas";

/** What a rental asks of an offer, and the offer search it stands for (rentals, fleets and spend caps share it). */
export interface OfferCriteria {
  /** Rent exactly this offer; no search, no fallback to another offer. */
  offerId?: number;
  /** Field filters, as `POST /api/v0/bundles/` takes them (`{"gpu_name": {"eq": "RTX 4090"}}`). */
  filters?: OfferFilters;
  /** Preference order of candidates. Default: cheapest first, `[["dph_total", "asc"]]`. */
  order?: Order;
  /** Market: `on-demand` (default), `bid` (interruptible) or `reserved`. */
  type?: OfferType;
  /** Upper bound on `dph_total` ($/hour). */
  maxPricePerHour?: number;
  /** Candidates fetched per search. Default 20. */
  candidatesPerSearch?: number;
}

export const DEFAULT_ORDER: Order = [["dph_total", "asc"]];

/** The offer search a set of criteria stands for, leaving out offers already tried or claimed. */
export function offerQuery(criteria: OfferCriteria, exclude: Iterable<number> = []): OfferQuery {
  const filters: OfferFilters = { rentable: { eq: true }, ...criteria.filters };
  if (criteria.offerId !== undefined) filters.id = { eq: criteria.offerId };
  if (criteria.maxPricePerHour !== undefined) filters.dph_total = { ...filters.dph_total, lte: criteria.maxPricePerHour };
  const excluded = [...exclude];
  if (excluded.length) filters.id = { ...filters.id, notin: excluded };
  return {
    filters,
    order: criteria.order ?? DEFAULT_ORDER,
    type: criteria.type ?? "on-demand",
    limit: criteria.offerId !== undefined ? 1 : (criteria.candidatesPerSearch ?? 20),
  };
}
