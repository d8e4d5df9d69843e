import { Clock, REAL_TIME } from "../clock";
import { Pacing } from "../pacing";
import type { OfferCriteria } from "./criteria";
import { OfferPool, poolKey } from "./offer-pool";

/**
 * What the rentals sharing one client (or, in a Pulumi provider, every client of one provider) know of each other,
 * per service (offer ids are the service's own):
 * - the offers they are accepting right now, or took (rented, or found gone) lately. Rentals running at once (the
 *   resources of one Pulumi program, a fleet) skip these instead of racing for the cheapest offers: a search result
 *   is a snapshot, and an offer another rental took after that search is still on its list;
 * - the offer searches of like rentals (offer-pool.ts): one search's offers, each handed to one rental;
 * - the queue of capped rentals (`maxHourlySpend`), which run one after another, each checking the cap after the
 *   previous one's instance exists, so together they cannot cross it;
 * - the queues of the endpoints the service rate-limits, per key (../pacing.ts), which every call of these
 *   clients takes its turn in.
 */
export class Rentals {
  private readonly services = new Map<string, ServiceClaims>();
  private readonly capQueues = new Map<string, Promise<unknown>>();
  private readonly pools = new Map<string, OfferPool>();
  readonly pacing: Pacing;

  constructor(private readonly clock: Clock = REAL_TIME) {
    this.pacing = new Pacing(clock);
  }

  /** The offers of `criteria` on a service, shared by the rentals that search for them now (made anew once idle and old). */
  offerPool(service: string, criteria: OfferCriteria): OfferPool {
    const key = `${service}\n${poolKey(criteria)}`;
    const pool = this.pools.get(key);
    if (pool && !pool.retired()) return pool;
    for (const [other, old] of this.pools) if (old.retired()) this.pools.delete(other);
    const made = new OfferPool(criteria, this.clock, () => this.acceptingOffers(service));
    this.pools.set(key, made);
    return made;
  }

  /**
   * Claims an offer found by a search made at `searchedAt`; false when another rental is accepting it, or took it
   * since that search (an offer taken before it, and listed again, was given back).
   */
  claimOffer(service: string, id: number, searchedAt: number): boolean {
    const claims = this.of(service);
    if (claims.accepting.has(id) || (claims.taken.get(id) ?? -Infinity) >= searchedAt) return false;
    claims.accepting.add(id);
    return true;
  }

  /** Gives a claim up; `taken` when the offer was rented or found gone. */
  releaseOffer(service: string, id: number, taken: boolean): void {
    const claims = this.of(service);
    claims.accepting.delete(id);
    if (taken) claims.taken.set(id, this.clock.now());
  }

  /** The offers of a service being accepted by other rentals now: to leave out of searches. */
  acceptingOffers(service: string): number[] {
    return [...this.of(service).accepting];
  }

  /** Runs capped rentals of one service one after another. */
  oneCappedRentalAtATime<T>(service: string, rent: () => Promise<T>): Promise<T> {
    const previous = this.capQueues.get(service) ?? Promise.resolve();
    const next = previous.then(rent, rent);
    const settled = next.catch(() => undefined);
    this.capQueues.set(service, settled);
    void settled.then(() => this.capQueues.get(service) === settled && this.capQueues.delete(service));
    return next;
  }

  private of(service: string): ServiceClaims {
    let claims = this.services.get(service);
    if (!claims) this.services.set(service, (claims = { accepting: new Set(), taken: new Map() }));
    const now = this.clock.now();
    for (const [id, at] of claims.taken) if (now - at > TAKEN_MEMORY_MS) claims.taken.delete(id);
    return claims;
  }
}

interface ServiceClaims {
  accepting: Set<number>;
  /** Offer id → when it was last taken. */
  taken: Map<number, number>;
}

/** Longer than any rental goes on with one search's candidates. */
const TAKEN_MEMORY_MS = 10 * 60_000;
