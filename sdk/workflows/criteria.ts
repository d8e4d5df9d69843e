import type { OfferQuery } from "../offers";
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

/** What a search for `criteria` that found nothing means: a pinned offer gone, or no offer the filters match. */
export function noMatchText(criteria: OfferCriteria): string {
  return criteria.offerId !== undefined
    ? `Offer ${criteria.offerId} is not available (it does not exist, or it is rented)`
    : `No offer matches ${searchText(criteria)}`;
}

/** The filters of the search `criteria` stand for, as the service is sent them. */
export function searchText(criteria: OfferCriteria): string {
  return JSON.stringify(offerQuery(criteria).filters);
}

/** What to do about it. */
export const WIDEN_CRITERIA = "Search the market with other criteria, or a higher price limit.";
