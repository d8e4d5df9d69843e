import { CreateInstanceRequest, OfferSearchRequest } from "../../sdk/schemas";
import { Accounts, Principal, UserRecord } from "./accounts";
import { seedOffers } from "./catalogue";
import { Clock } from "./clock";
import { ServiceError } from "./errors";
import { Instances, Lifecycle } from "./instances";
import { Market } from "./offers";
import { Random } from "./random";

export interface MarketplaceOptions {
  seed?: number;
  clock?: Clock;
  /** Offers in the seeded market. Default 300. */
  offers?: number;
  lifecycle?: Partial<Lifecycle>;
  /** Probability that an accepted offer was taken by another tenant first. Default 0. */
  contention?: number;
  /** The seeded user's API key; random (from the seed) when not given. */
  apiKey?: string;
}

export interface MarketStats {
  offersAccepted: number;
  /** Accepts refused because another tenant took the offer first (contention). */
  offersLostToContention: number;
  /** Accepts refused because the offer did not exist or was already rented. */
  offersUnavailable: number;
}

export const DEFAULT_LIFECYCLE: Lifecycle = { provisioningMs: 2_000, loadingMs: 5_000 };

/**
 * The whole emulated service, without HTTP: users and keys, the offer market, instances, and the knobs tests
 * turn (clock, contention, lifecycle durations).
 */
export class Marketplace {
  readonly clock: Clock;
  readonly random: Random;
  /** Its own stream, so the contention a seed gives does not depend on what else drew random numbers. */
  private readonly contentionRandom: Random;
  readonly accounts: Accounts;
  readonly market: Market;
  readonly instances: Instances;
  readonly seededUser: UserRecord;
  readonly seededKey: string;
  lifecycle: Lifecycle;
  contention: number;
  readonly stats: MarketStats = { offersAccepted: 0, offersLostToContention: 0, offersUnavailable: 0 };

  constructor(options: MarketplaceOptions = {}) {
    this.clock = options.clock ?? new Clock();
    this.random = new Random(options.seed ?? 1);
    this.contentionRandom = new Random((options.seed ?? 1) ^ 0x5eed);
    this.lifecycle = { ...DEFAULT_LIFECYCLE, ...options.lifecycle };
    this.contention = options.contention ?? 0;
    const now = () => this.clock.now();
    this.accounts = new Accounts(this.random, now);
    this.market = new Market(seedOffers(this.random, options.offers ?? 300, this.clock.nowSeconds()));
    this.instances = new Instances({
      now,
      lifecycle: () => this.lifecycle,
      takeOffer: (offerId, instanceId) => this.market.take(offerId, { kind: "instance", instanceId }),
      releaseOffer: (offerId) => this.market.release(offerId),
      issueInstanceKey: (ownerId, instanceId) => {
        const key = this.accounts.issueKey(ownerId, { name: `instance ${instanceId}`, instanceId });
        return { id: key.id, key: key.key };
      },
      revokeKey: (keyId) => this.accounts.revokeKeyById(keyId),
      charge: (ownerId, amount) => {
        const user = this.accounts.user(ownerId);
        if (user) user.credit -= amount;
      },
      pick: (min, max) => this.random.int(min, max),
    });
    this.seededUser = this.accounts.addUser({ email: "demo@gpu-rental.test", fullName: "Demo User", credit: 1000 });
    this.seededKey = this.accounts.issueKey(this.seededUser.id, { name: "seeded", value: options.apiKey }).key;
  }

  searchOffers(request: OfferSearchRequest) {
    return this.market.search(request);
  }

  /**
   * Accepts an offer. With contention, the offer may have been taken by another tenant a moment before: it
   * leaves the market and the client gets `no_such_ask`, as it would from the live service.
   */
  acceptOffer(principal: Principal, offerId: number, request: CreateInstanceRequest) {
    try {
      if (this.contention > 0 && this.market.available(offerId) && this.contentionRandom.chance(this.contention)) {
        this.market.take(offerId, { kind: "other_tenant" });
        this.stats.offersLostToContention++;
      }
      const created = this.instances.create(principal.user.id, offerId, request);
      this.stats.offersAccepted++;
      return created;
    } catch (error) {
      if (error instanceof ServiceError && error.code === "no_such_ask") {
        this.stats.offersUnavailable++;
        // cancel_unavail: fail with 410 rather than 404, as the live service does.
        if (request.cancel_unavail) throw new ServiceError("gone", error.code, error.message);
      }
      throw error;
    }
  }
}
