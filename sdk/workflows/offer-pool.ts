import type { Clock } from "../clock";
import { isTransient, RateLimitedError } from "../errors";
import type { OfferQuery } from "../offers";
import type { Patience } from "../pacing";
import type { Offer } from "../schemas";
import { OfferCriteria, offerQuery } from "./criteria";

/** What the pool searches with: a client (named so, not imported: the client holds the pools). */
export interface OfferSearcher {
  offers: { search(query: OfferQuery, patience?: Patience): Promise<Offer[]> };
}

/** An offer handed to one rental, and when the search that found it was made. */
export interface Drawn {
  offer: Offer;
  searchedAt: number;
}

/**
 * The offers of one search (one set of criteria) that the rentals of one Rentals share, as the resources of one
 * Pulumi program or the members of a fleet do: searched once, each offer handed to one rental only, searched again
 * when they run out or the result has grown old. The service limits offer search per key, so many like rentals
 * make a handful of searches, not one each (docs/workflows.md has the figures); and no two reach for the same offer.
 */
export class OfferPool {
  private readonly queue: Offer[] = [];
  private readonly handedOut = new Set<number>();
  private searching?: { by: OfferSearcher; done: Promise<void> };
  /** When the offers held were searched (a new pool: when it was made, so it is not old before its first search). */
  private searchedAt: number;
  /** The last search found no offer not handed out already. */
  private exhausted = false;
  /** The last search found fewer than it asked for: it saw every match. */
  private complete = false;
  private rentals = 0;
  /** When the last rental left (the pool made: when it was made). */
  private leftAt: number;

  constructor(
    private readonly criteria: OfferCriteria,
    private readonly clock: Clock,
    /** The offers other rentals of the service are accepting: left out of searches. */
    private readonly accepting: () => number[],
  ) {
    this.searchedAt = clock.now();
    this.leftAt = this.searchedAt;
  }

  /** A rental draws from the pool until it leaves: the searches fetch enough for all of them at once. */
  join(): () => void {
    // The first of new rentals: offers given back since the last ran out may be on the market again.
    if (this.rentals === 0) this.exhausted = false;
    this.rentals++;
    return () => {
      this.rentals--;
      this.leftAt = this.clock.now();
    };
  }

  /**
   * No rental draws from it, and its result is old, or was drawn from and no rental came for a while (its rentals
   * are over: what they were handed may be on the market again): a new pool serves the next rental. Rentals that
   * come one after another, as a program's resources do when the engine starts them in turn, keep drawing from
   * one search. A result only looked at (a preview's) is kept.
   */
  retired(): boolean {
    const idle = this.clock.now() - this.leftAt > LINGER_MS;
    return this.rentals === 0 && !this.searching && (this.old() || (this.handedOut.size > 0 && idle));
  }

  /** An offer no other rental got; null once a search finds no new one. */
  async next(client: OfferSearcher, patience?: Patience): Promise<Drawn | null> {
    for (;;) {
      if (this.old()) this.forget();
      const offer = this.queue.shift();
      if (offer) {
        this.handedOut.add(offer.id);
        return { offer, searchedAt: this.searchedAt };
      }
      if (this.exhausted) return null;
      await this.search(client, 0, patience);
    }
  }

  /** How many offers the pool holds for rentals still to come, searched for (once) when it holds fewer than `count`. */
  async available(client: OfferSearcher, count: number, patience?: Patience): Promise<number> {
    if (this.old()) this.forget();
    if (this.queue.length < count && !this.complete) await this.search(client, count, patience);
    return this.queue.length;
  }

  /** An offer a rental drew and did not take (it ended otherwise): the next rental gets it first. */
  giveBack(offer: Offer): void {
    if (!this.queue.some((o) => o.id === offer.id)) this.queue.unshift(offer);
  }

  /** The offers ran out, and others may have given theirs back since: the next draw searches again. */
  again(): void {
    this.exhausted = false;
  }

  private old(): boolean {
    return this.clock.now() - this.searchedAt > FRESH_MS;
  }

  private forget(): void {
    this.queue.length = 0;
    this.exhausted = false;
    this.complete = false;
  }

  /**
   * One search at a time, shared by every rental that needs it. When it fails for a while, a rental that may wait
   * longer than the searcher (its wait for the rate limit ended by the searcher's deadline) or that has a client of
   * its own (a preview's brief calls, another account's key) searches again itself.
   */
  private async search(client: OfferSearcher, want: number, patience?: Patience): Promise<void> {
    for (;;) {
      const shared = this.searching;
      if (!shared) {
        const done = this.searchNow(client, want, patience).finally(() => (this.searching = undefined));
        this.searching = { by: client, done };
        // Awaited here, as the others await it: the rentals go on in the order they asked.
        return await done;
      }
      try {
        return await shared.done;
      } catch (error) {
        if (!isTransient(error) || (shared.by === client && !(error instanceof RateLimitedError))) throw error;
      }
    }
  }

  private async searchNow(client: OfferSearcher, want: number, patience?: Patience): Promise<void> {
    // The rentals starting together (a fleet's members) join before the search sets its size.
    await Promise.resolve();
    const limit = Math.min(MAX_BATCH, Math.max(want, this.criteria.candidatesPerSearch ?? 20, 2 * this.rentals + 10));
    const at = this.clock.now();
    let found = await this.find(client, limit, true, patience);
    // Nothing new beside what was handed out: those rentals may have given their offers back to the market since
    // (an instance destroyed); the claims (rentals.ts) still keep two rentals from one offer.
    if (found.length === 0 && this.handedOut.size > 0) {
      this.handedOut.clear();
      found = await this.find(client, limit, false, patience);
    }
    const fresh = found.filter((offer) => !this.handedOut.has(offer.id));
    this.queue.splice(0, this.queue.length, ...fresh);
    this.searchedAt = at;
    this.exhausted = fresh.length === 0;
    this.complete = found.length < limit;
  }

  private find(client: OfferSearcher, limit: number, leaveOutHanded: boolean, patience?: Patience): Promise<Offer[]> {
    const leftOut = [...(leaveOutHanded ? this.handedOut : []), ...this.accepting()];
    return client.offers.search(offerQuery({ ...this.criteria, candidatesPerSearch: limit }, leftOut), patience);
  }
}

/** The service answers at most this many offers a search. */
const MAX_BATCH = 1000;

/**
 * How long a search's result is drawn from: the offers a rental draws later come from a new search (offers go
 * fast on a busy market), rarely enough to stay well within the service's limit on searches.
 */
const FRESH_MS = 60_000;

/** How long a pool drawn from outlives its last rental: longer than the engine's pause between two resources. */
const LINGER_MS = 5_000;

/** The search a set of criteria stands for, whatever its batch size: criteria of the same search share a pool. */
export function poolKey(criteria: OfferCriteria): string {
  const { limit: _batch, ...query } = offerQuery(criteria);
  return JSON.stringify(query);
}
