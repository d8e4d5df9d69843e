import type { OfferFilters } from "../../sdk";

/**
 * Of the offer rented, what the state keeps (the `rentedOffer` output of an Instance and of each GpuFleet member):
 * its id and the fields new criteria are checked against. New criteria that the offer rented still meets are
 * recorded in place, so the state keeps the fields the usual criteria compare (the GPU model, count and memory, the
 * price and the minimum bid, reliability, location, direct ports) and every field the resource's own filters
 * compare. The rest of the offer would only weigh on every checkpoint the engine writes. A filter added later on a
 * field not kept cannot be checked against the offer: it replaces the instance, as for an adopted one.
 */
export const KEPT_OFFER_FIELDS: readonly string[] = ["id", "gpu_name", "num_gpus", "gpu_ram", "dph_total", "min_bid", "reliability", "geolocation", "direct_port_count"];

/**
 * The offer as the state keeps it, for criteria whose filters are `filters`. An offer kept whole by an earlier
 * version is trimmed the same way, and checks the same, when its resource is next updated or refreshed.
 */
export function keptOffer(offer: Readonly<Record<string, unknown>> | null | undefined, filters: OfferFilters): Record<string, unknown> | null {
  if (!offer) return null;
  const fields = new Set([...KEPT_OFFER_FIELDS, ...Object.keys(filters)]);
  return Object.fromEntries(Object.entries(offer).filter(([field, value]) => fields.has(field) && value !== undefined));
}
