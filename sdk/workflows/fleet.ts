import { GpuRentalClient } from "../client";
import { REAL_TIME } from "../clock";
import { GpuRentalError } from "../errors";
import { CreateInstanceRequest, Offer } from "../schemas";
import { NoMatchingOfferError, OfferCriteria, offerQuery, RentFailedError, RentOptions, RentResult, rentInstance } from "./rent";
import { criteriaUnderCap } from "./spend";
import { destroyRetried } from "./destroy";

export interface FleetPolicy extends RentOptions {
  /** A fleet that cannot be rented whole is destroyed again (default); otherwise what was rented is returned. */
  allOrNothing?: boolean;
  /** The creation token of member `i` (a Pulumi fleet's, derived from its URN); default a fresh one per attempt. */
  tokenOf?: (index: number) => string | undefined;
}

export interface FleetResult {
  rented: RentResult[];
  /** The rentals that failed (only without `allOrNothing`). */
  failures: GpuRentalError[];
  /** Each member's rental or failure, in member order (only without `allOrNothing`, where some may fail). */
  members: (RentResult | GpuRentalError)[];
}

/** A fleet that could not be rented whole: what failed, and what was destroyed again. */
export class FleetRentError extends GpuRentalError {
  override name = "FleetRentError";
  constructor(
    message: string,
    readonly failures: GpuRentalError[],
    readonly destroyed: number[],
  ) {
    super(message);
  }
}

/**
 * Rents `size` instances of the same criteria at once. The rentals run together in this process without ever
 * reaching for the same offer. `request` is the creation request of every member, or of member `i` (a label
 * of its own). With `allOrNothing` (the default) a partial fleet is destroyed before the error is raised, so a
 * failed fleet costs nothing.
 */
export async function rentFleet(
  client: GpuRentalClient,
  size: number,
  criteria: OfferCriteria,
  request: CreateInstanceRequest | ((index: number) => CreateInstanceRequest),
  policy: FleetPolicy = {},
): Promise<FleetResult> {
  const cap = policy.maxHourlySpend;
  if (cap !== undefined) {
    // The whole fleet is checked against the cap at once (each rental at most its share): it fits, or none is rented.
    return GpuRentalClient.rentalsOf(client).oneCappedRentalAtATime(client.apiUrl, async () =>
      rentFleet(client, size, await criteriaUnderCap(client, criteria, cap, size), request, { ...policy, maxHourlySpend: undefined }));
  }
  const requestOf = typeof request === "function" ? request : () => request;
  const pool = new OfferPool(client, criteria, Math.min(1000, 2 * size + 10));
  const { tokenOf, ...rest } = policy;
  const outcomes = await Promise.allSettled(Array.from({ length: size }, (_, i) => rentMember(client, pool, criteria, requestOf(i), { ...rest, token: tokenOf?.(i) ?? rest.token })));
  const members = outcomes.map((o) => (o.status === "fulfilled" ? o.value : asError(o.reason)));
  const rented = members.filter((m): m is RentResult => !(m instanceof GpuRentalError));
  const failures = members.filter((m): m is GpuRentalError => m instanceof GpuRentalError);
  if (!failures.length || policy.allOrNothing === false) return { rented, failures, members };
  const destroyed = rented.map((r) => r.instanceId);
  await destroyRetried(client, destroyed, policy);
  throw new FleetRentError(
    `Could not rent a fleet of ${size}: ${failures.length} rental(s) failed (${failures[0].message}). ` +
      `The ${rented.length} instance(s) rented were destroyed again${destroyed.length ? ` (${destroyed.join(", ")})` : ""}.`,
    failures,
    destroyed,
  );
}

/**
 * One member's rental: the offers of the fleet's shared searches first, each handed to this member alone (an offer
 * another tenant took first is passed over for the next); when they run out, a rental of its own, which searches
 * the market as any rental does. Pinned criteria (`offerId`) go straight to the rental.
 */
async function rentMember(client: GpuRentalClient, pool: OfferPool, criteria: OfferCriteria, request: CreateInstanceRequest, policy: FleetPolicy): Promise<RentResult> {
  const clock = policy.clock ?? REAL_TIME;
  const deadline = clock.now() + (policy.deadlineMs ?? 600_000);
  const left = () => Math.max(1, deadline - clock.now());
  if (criteria.offerId === undefined) {
    for (let offer = await pool.next(); offer && clock.now() < deadline; offer = await pool.next()) {
      try {
        return await rentInstance(client, { ...criteria, offerId: offer.id }, request, { ...policy, deadlineMs: left() });
      } catch (error) {
        if (!(error instanceof RentFailedError || error instanceof NoMatchingOfferError)) throw error;
      }
    }
  }
  return rentInstance(client, criteria, request, { ...policy, deadlineMs: left() });
}

/**
 * The offers a fleet's members rent, from searches shared by all of them (one at a time), each offer handed out
 * once: a fleet of N costs about N / batch searches, not one search a member that its siblings race for.
 */
class OfferPool {
  private readonly queue: Offer[] = [];
  private readonly handedOut = new Set<number>();
  private searching?: Promise<void>;
  private exhausted = false;

  constructor(
    private readonly client: GpuRentalClient,
    private readonly criteria: OfferCriteria,
    private readonly batch: number,
  ) {}

  /** An offer no other member got; null once a search finds no new one. */
  async next(): Promise<Offer | null> {
    while (!this.queue.length && !this.exhausted) {
      this.searching ??= this.search().finally(() => (this.searching = undefined));
      await this.searching;
    }
    return this.queue.shift() ?? null;
  }

  private async search(): Promise<void> {
    const exclude = [...this.handedOut, ...GpuRentalClient.rentalsOf(this.client).acceptingOffers(this.client.apiUrl)];
    const found = await this.client.offers.search(offerQuery({ ...this.criteria, candidatesPerSearch: this.batch }, exclude));
    const fresh = found.filter((offer) => !this.handedOut.has(offer.id));
    if (!fresh.length) this.exhausted = true;
    for (const offer of fresh) this.handedOut.add(offer.id);
    this.queue.push(...fresh);
  }
}

function asError(reason: unknown): GpuRentalError {
  return reason instanceof GpuRentalError ? reason : new GpuRentalError(String((reason as Error)?.message ?? reason));
}
