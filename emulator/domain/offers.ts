import { Offer, OfferSearchRequest, OfferType } from "../../sdk/schemas";
import { compareBy, compileFilters, FieldType, matches } from "./filters";
import { notFound } from "./errors";

/** Fields an offer search can filter or order on, with their types (for coercion of string values). */
export const OFFER_FIELDS: Record<string, FieldType> = {
  id: "number", ask_contract_id: "number", bundle_id: "number", machine_id: "number", host_id: "number",
  num_gpus: "number", gpu_ram: "number", gpu_total_ram: "number", gpu_frac: "number", cpu_cores: "number",
  cpu_cores_effective: "number", cpu_ram: "number", cpu_ghz: "number", disk_space: "number", disk_bw: "number",
  inet_up: "number", inet_down: "number", reliability: "number", reliability2: "number", dlperf: "number",
  dlperf_per_dphtotal: "number", score: "number", total_flops: "number", cuda_max_good: "number",
  compute_cap: "number", pcie_bw: "number", direct_port_count: "number", hosting_type: "number", min_bid: "number",
  dph_base: "number", dph_total: "number", storage_cost: "number", start_date: "number", end_date: "number",
  duration: "number",
  gpu_name: "string", cpu_name: "string", driver_version: "string", geolocation: "string", verification: "string",
  verified: "boolean", external: "boolean", rentable: "boolean", rented: "boolean", is_bid: "boolean",
};

const DEFAULT_LIMIT = 64;
const MAX_LIMIT = 1000;
/** Reserved (prepaid) offers are discounted against on-demand. */
const RESERVED_DISCOUNT = 0.8;

/** Who holds an offer that is no longer on the market. */
type Holder = { kind: "instance"; instanceId: number } | { kind: "other_tenant" };

/** The instance market: the seeded offers and which of them are rented. */
export class Market {
  private readonly offers = new Map<number, Offer>();
  private readonly held = new Map<number, Holder>();

  constructor(offers: Offer[]) {
    for (const offer of offers) this.offers.set(offer.id, offer);
  }

  get size(): number {
    return this.offers.size;
  }

  /** Offers still on the market that match, priced for the requested market type, ordered, limited. */
  search(request: OfferSearchRequest): Offer[] {
    const { order, type, limit, allocated_storage, ...filters } = request;
    const compiled = compileFilters(filters, OFFER_FIELDS);
    const sort = order?.length ? compareBy<Offer>(order, OFFER_FIELDS) : undefined;
    const found: Offer[] = [];
    for (const offer of this.offers.values()) {
      if (this.held.has(offer.id)) continue;
      if (allocated_storage !== undefined && (offer.disk_space ?? 0) < allocated_storage) continue;
      const priced = priceFor(offer, type);
      if (matches(priced, compiled)) found.push(priced);
    }
    if (sort) found.sort(sort);
    return found.slice(0, Math.min(limit ?? DEFAULT_LIMIT, MAX_LIMIT));
  }

  /** The offer, if it is still on the market. */
  available(offerId: number): Offer | undefined {
    return this.held.has(offerId) ? undefined : this.offers.get(offerId);
  }

  /** Takes an offer off the market for an instance; `no_such_ask` when it is unknown or already rented. */
  take(offerId: number, holder: Holder): Offer {
    const offer = this.available(offerId);
    if (!offer) throw notFound("no_such_ask", `Offer ${offerId} does not exist or is no longer available.`);
    this.held.set(offerId, holder);
    return offer;
  }

  /** Puts an offer back on the market (its instance was destroyed). */
  release(offerId: number): void {
    this.held.delete(offerId);
  }
}

/** The offer as a search of that market type shows it: bids at the minimum bid, reserved at a discount. */
export function priceFor(offer: Offer, type: OfferType | undefined): Offer {
  if (type === "bid") return { ...offer, dph_total: offer.min_bid ?? offer.dph_total, is_bid: true };
  if (type === "reserved") return { ...offer, dph_total: Number((offer.dph_total * RESERVED_DISCOUNT).toFixed(4)) };
  return offer;
}
