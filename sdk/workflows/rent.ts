import { GpuRentalClient, OfferQuery } from "../client";
import { ConfigurationError, GpuRentalError, NetworkError, OfferUnavailableError, ServerError } from "../errors";
import { CreateInstanceRequest, FieldFilter, Instance, Offer, OfferType, Order } from "../schemas";

/** What to rent: one offer by id, or the best offers matching a search. */
export interface OfferCriteria {
  /** Rent exactly this offer; no search, no fallback to another offer. */
  offerId?: number;
  /** Field filters, as `POST /api/v0/bundles/` takes them (`{"gpu_name": {"eq": "RTX 4090"}}`). */
  filters?: Record<string, FieldFilter>;
  /** Preference order of candidates. Default: cheapest first, `[["dph_total", "asc"]]`. */
  order?: Order;
  /** Market: `on-demand` (default), `bid` (interruptible) or `reserved`. */
  type?: OfferType;
  /** Upper bound on `dph_total` ($/hour). */
  maxPricePerHour?: number;
  /** Candidates fetched per search. Default 20. */
  candidatesPerSearch?: number;
}

export interface RentOptions {
  /** Offers tried in all before giving up. Default 10. */
  maxAttempts?: number;
  /** Searches run in all (a new search when every candidate of the last one has vanished). Default 4. */
  maxSearches?: number;
  onAttempt?: (attempt: RentAttempt) => void;
}

export interface RentAttempt {
  offerId: number;
  /**
   * `rented`; `vanished` (someone else took it first); `recovered` (the answer was lost, but the instance was
   * found); `failed` (the service failed and no instance was created: the next offer is tried).
   */
  outcome: "rented" | "vanished" | "recovered" | "failed";
  detail?: string;
}

export interface RentResult {
  instanceId: number;
  instanceApiKey?: string;
  offer: Offer;
  attempts: RentAttempt[];
}

/** No offer matches the criteria at all: nothing was tried. */
export class NoMatchingOfferError extends GpuRentalError {
  override name = "NoMatchingOfferError";
}

/** Every offer tried had vanished before it could be accepted; `attempts` lists them. */
export class RentFailedError extends GpuRentalError {
  override name = "RentFailedError";
  constructor(
    message: string,
    readonly attempts: RentAttempt[],
  ) {
    super(message);
  }
}

export const DEFAULT_ORDER: Order = [["dph_total", "asc"]];

/** The offer search a set of criteria stands for. */
export function offerQuery(criteria: OfferCriteria, exclude: Iterable<number> = []): OfferQuery {
  const filters: Record<string, FieldFilter> = { rentable: { eq: true }, ...criteria.filters };
  if (criteria.offerId !== undefined) filters.id = { eq: criteria.offerId };
  if (criteria.maxPricePerHour !== undefined) {
    filters.dph_total = { ...filters.dph_total, lte: criteria.maxPricePerHour };
  }
  const excluded = [...exclude];
  if (excluded.length) filters.id = { ...filters.id, notin: excluded };
  return {
    filters,
    order: criteria.order ?? DEFAULT_ORDER,
    type: criteria.type ?? "on-demand",
    limit: criteria.offerId !== undefined ? 1 : (criteria.candidatesPerSearch ?? 20),
  };
}

/**
 * Rents an instance: searches, accepts candidates in order, moves on when one has vanished between search and
 * acceptance (another tenant took it), searches again when the list is used up, and gives up after a bounded
 * number of attempts with an error that lists every offer it tried.
 */
export async function rentInstance(
  client: GpuRentalClient,
  criteria: OfferCriteria,
  request: CreateInstanceRequest,
  options: RentOptions = {},
): Promise<RentResult> {
  if (criteria.type === "reserved") {
    throw new ConfigurationError(
      "Renting a reserved offer is not supported: the API shows no way to accept one at its reserved price. Use on-demand or bid.",
    );
  }
  const maxAttempts = options.maxAttempts ?? 10;
  const maxSearches = criteria.offerId !== undefined ? 1 : (options.maxSearches ?? 4);
  const attempts: RentAttempt[] = [];
  // Instances that exist before this rental: one created by a request whose answer was lost is found by
  // being new on the offer's machine, whatever image or template it was made from.
  let before: Set<number> | undefined;
  const record = (attempt: RentAttempt) => {
    attempts.push(attempt);
    options.onAttempt?.(attempt);
  };

  for (let search = 0; search < maxSearches && attempts.length < maxAttempts; search++) {
    const candidates = await client.searchOffers(offerQuery(criteria, attempts.map((a) => a.offerId)));
    if (candidates.length === 0) {
      if (attempts.length === 0) throw noMatch(criteria);
      break;
    }
    for (const offer of candidates) {
      if (attempts.length >= maxAttempts) break;
      try {
        before ??= new Set((await client.listInstances()).map((i) => i.id));
        const created = await client.createInstance(offer.id, withBid(request, criteria, offer));
        record({ offerId: offer.id, outcome: "rented" });
        return { instanceId: created.new_contract, instanceApiKey: created.instance_api_key, offer, attempts };
      } catch (error) {
        if (error instanceof OfferUnavailableError) {
          record({ offerId: offer.id, outcome: "vanished", detail: error.serviceMessage });
          continue;
        }
        if (!(error instanceof NetworkError || error instanceof ServerError)) throw error;
        // The request may have been carried out with its answer lost: look before renting anything else, or
        // an instance would be left running (and billed) that nobody knows of.
        const created = await findCreated(client, offer, before ?? new Set());
        record({ offerId: offer.id, outcome: created ? "recovered" : "failed", detail: error.message });
        if (created) return { instanceId: created.id, offer, attempts };
      }
    }
  }
  const tried = attempts.map((a) => `${a.offerId} (${a.outcome}${a.detail ? `: ${a.detail}` : ""})`).join(", ");
  throw new RentFailedError(
    `Could not rent an instance: ${attempts.length} offer(s) tried, none rented: ${tried}. ` +
      "The market is busy; try again, widen the criteria, or raise the attempt limit.",
    attempts,
  );
}

/** A new instance of ours on the offer's machine, if the creation went through after all. */
async function findCreated(client: GpuRentalClient, offer: Offer, before: Set<number>): Promise<Instance | undefined> {
  const instances = await client.listInstances();
  return instances.find((i) => !before.has(i.id) && i.machine_id === offer.machine_id);
}

/**
 * An interruptible rental must name its bid (the spec: provide `price` for an offer found with type `bid`),
 * or the service rents on demand, at a higher price. The bid is the price limit when there is one (the most the
 * user will pay, which makes being outbid less likely), else the offer's minimum bid, which a bid search shows.
 */
function withBid(request: CreateInstanceRequest, criteria: OfferCriteria, offer: Offer): CreateInstanceRequest {
  if (criteria.type !== "bid" || request.price !== undefined) return request;
  return { ...request, price: criteria.maxPricePerHour ?? offer.dph_total };
}

function noMatch(criteria: OfferCriteria): NoMatchingOfferError {
  const what =
    criteria.offerId !== undefined
      ? `Offer ${criteria.offerId} is not available (it does not exist, or it is rented)`
      : `No offer matches ${JSON.stringify(offerQuery(criteria).filters)}`;
  return new NoMatchingOfferError(`${what}. Search the market with other criteria, or a higher price limit.`);
}
