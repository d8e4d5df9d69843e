import type { Caller } from "./call";
import type { OfferFilters } from "./offer-filters";
import type { Patience } from "./pacing";
import { Offer, OfferSearchResponse, offersOf, OfferType, Order } from "./schemas";

/** An offer search: field filters plus the reserved keys of `POST /api/v0/bundles/`. */
export interface OfferQuery {
  filters?: OfferFilters;
  order?: Order;
  type?: OfferType;
  limit?: number;
  /** GB wanted on the disk; offers too small are left out. */
  allocatedStorage?: number;
}

async function searchOffers(client: Caller, query: OfferQuery = {}, patience?: Patience): Promise<Offer[]> {
  const body: Record<string, unknown> = { ...query.filters };
  if (query.order) body.order = query.order;
  if (query.type) body.type = query.type;
  if (query.limit !== undefined) body.limit = query.limit;
  if (query.allocatedStorage !== undefined) body.allocated_storage = query.allocatedStorage;
  const res = await client.call({ method: "POST", path: "/api/v0/bundles/", body, schema: OfferSearchResponse }, patience);
  return offersOf(res);
}

/** `client.offers`: offer search; `patience`: how long it may wait for the service's rate limit (a rental's deadline). */
export function offersApi(client: Caller) {
  return { search: (query?: OfferQuery, patience?: Patience) => searchOffers(client, query, patience) };
}
