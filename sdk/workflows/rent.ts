import { GpuRentalClient, LimitWait, Patience } from "../client";
import { BadRequestError, ConfigurationError, GpuRentalError, OfferUnavailableError, RateLimitedError } from "../errors";
import { CreateInstanceRequest, Offer } from "../schemas";
import { Clock, REAL_TIME } from "../clock";
import type { Rentals } from "./rentals";
import type { Drawn, OfferPool } from "./offer-pool";
import { createOnce, CreationOptions, FailureBudget, NotCreatedError } from "./create-once";
import { sweepCommand, TOKEN_ENV, tokenOfInstance } from "./tokens";
import { destroyRetried } from "./destroy";
import { pauseUnlessInterrupted, throwIfInterrupted, untilInterrupted } from "./interruption";
import { LifetimePolicy, withWatchdog } from "./watchdog";
import { criteriaUnderCap } from "./spend";
import { noMatchText, OfferCriteria, offerQuery, WIDEN_CRITERIA } from "./criteria";

export { DEFAULT_ORDER, offerQuery } from "./criteria";
export type { OfferCriteria } from "./criteria";

/** What to rent: one offer by id, or the best offers matching a search. */

export interface RentOptions extends CreationOptions {
  /**
   * The rental's time budget: searches, acceptances and retries together. Default 10 minutes: waiting pays in a
   * busy market. A service failing on its own ends the rental sooner (`serviceFailureBudgetMs`, default 60 s).
   */
  deadlineMs?: number;
  /**
   * The instance key is in the creation's answer only. When that answer was lost and the instance was found by
   * its token, the key is unknown: with this set, that instance is destroyed and the offer rented again.
   */
  requireInstanceKey?: boolean;
  /** Every attempt, as it ends. */
  onAttempt?: (attempt: RentAttempt) => void;
  /**
   * A call of the rental starts waiting for the service's rate limit (once a 429 named its window, the calls of
   * that endpoint and key take turns): what waits, how many, until when. That wait counts against `deadlineMs`,
   * not against the call's own deadline.
   */
  onWait?: (wait: LimitWait) => void;
  /**
   * The instance ends itself after `maxLifetime`, or when idle for `idleTimeout` (see ./watchdog.ts): a watchdog
   * composed into `onstart`. Refused (ConfigurationError, nothing rented) for runtype `args`, which runs no onstart.
   */
  lifetime?: LifetimePolicy;
  /**
   * $/hour the account's instances may cost together (./spend.ts): a rental that would cross it is refused
   * (SpendCapError, naming what counts) before anything is rented. Capped rentals of this process run one at a time.
   */
  maxHourlySpend?: number;
}

export interface RentAttempt {
  offerId: number;
  /**
   * `rented`; `recovered` (the answer was lost, the instance found by its token); `vanished` (another tenant took
   * the offer first: the next offer is tried); `not_created` (the service failed and made nothing: the same offer
   * is tried again while it is free); `keyless` (recovered without its key, destroyed: rented again).
   */
  outcome: "rented" | "recovered" | "vanished" | "not_created" | "keyless";
  /** When the attempt ended, in ms since the rental began. */
  atMs: number;
  detail?: string;
}

export interface RentResult {
  instanceId: number;
  /** Undefined only for a recovered rental without `requireInstanceKey`: the container still has it. */
  instanceApiKey?: string;
  offer: Offer;
  /** The token the instance carries (its `GPU_RENTAL_TOKEN`). */
  token: string;
  attempts: RentAttempt[];
}

/** No offer matches the criteria at all: nothing was tried. */
export class NoMatchingOfferError extends GpuRentalError {
  override name = "NoMatchingOfferError";
}

/** A rental left an instance it could not use nor destroy (found without its key): `instanceId`, carrying `token`. */
export class InstanceLeftError extends GpuRentalError {
  override name = "InstanceLeftError";
  constructor(
    message: string,
    readonly instanceId: number,
    readonly token: string,
  ) {
    super(message);
  }
}

/** No instance could be rented in the time budget; `attempts` says what was tried, and the message why. */
export class RentFailedError extends GpuRentalError {
  override name = "RentFailedError";
  constructor(
    message: string,
    readonly attempts: RentAttempt[],
  ) {
    super(message);
  }
}


/**
 * Rents an instance, within a time budget. Searches, then accepts candidates in order: an offer another tenant
 * took first is left for the next one; an offer on which the service failed without making anything is tried
 * again while it is free; a creation whose answer was lost is found by the token it carries, never rented twice.
 * Rentals running at once in this process never reach for the same offer. Every attempt is reported.
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
  if (criteria.type === "bid" && request.price !== undefined && criteria.maxPricePerHour !== undefined && request.price > criteria.maxPricePerHour) {
    throw new ConfigurationError(`The bid (price ${request.price} $/hour) is above maxPricePerHour ${criteria.maxPricePerHour}: an interruptible rental never pays more than its cap. Lower the bid or raise the cap.`);
  }
  const guarded = withWatchdog(request, options.lifetime, client.apiUrl);
  const cap = options.maxHourlySpend;
  if (cap === undefined) return new Rental(client, criteria, guarded, options).run();
  return GpuRentalClient.rentalsOf(client).oneCappedRentalAtATime(client.apiUrl, async () =>
    new Rental(client, await criteriaUnderCap(client, criteria, cap), guarded, options).run());
}

/** One rental's state: what it tried, and until when it may go on. */
class Rental {
  private readonly clock: Clock;
  private readonly rentals: Rentals;
  private readonly started: number;
  private readonly deadline: number;
  readonly attempts: RentAttempt[] = [];
  /** Offers that vanished: never searched again. */
  private readonly gone = new Set<number>();
  /** Failures of the service itself in a row (5xx, timeouts, resets on offers that stay free). */
  private readonly failing: FailureBudget;

  constructor(
    private readonly client: GpuRentalClient,
    private readonly criteria: OfferCriteria,
    private readonly request: CreateInstanceRequest,
    private readonly options: RentOptions,
  ) {
    this.clock = options.clock ?? REAL_TIME;
    this.rentals = GpuRentalClient.rentalsOf(client);
    this.started = this.clock.now();
    this.deadline = this.started + (options.deadlineMs ?? 600_000);
    this.failing = new FailureBudget(options, "instance creation (PUT /api/v0/asks/{id}/)");
  }

  async run(): Promise<RentResult> {
    // Rentals of the same criteria draw from one search (offer-pool.ts); a pinned offer is looked up on its own.
    const pool = this.criteria.offerId === undefined ? this.rentals.offerPool(this.client.apiUrl, this.criteria) : undefined;
    const leave = pool?.join();
    try {
      while (this.timeLeft()) {
        this.throwIfInterrupted();
        // A search under way sends nothing: an interruption need not wait for it.
        const drawn = await untilInterrupted(pool ? pool.next(this.client, this.patience) : this.pinned(), this.options.signal, 0, "nothing was rented");
        if (!drawn) {
          const othersAccepting = this.rentals.acceptingOffers(this.client.apiUrl).length > 0;
          if (this.attempts.length === 0 && !othersAccepting) throw noMatch(this.criteria);
          if (!othersAccepting) break;
          // Every match is being accepted by another rental of this process: one of them may give its offer back.
          await pauseUnlessInterrupted(500, this.options.signal, "nothing was rented", this.clock);
          pool?.again();
          continue;
        }
        const rented = await this.claimAndTry(drawn, pool);
        if (rented) return rented;
        if (!pool) break;
      }
    } finally {
      leave?.();
    }
    throw this.failure();
  }

  /** The pinned offer, if it is on the market now. */
  private async pinned(): Promise<Drawn | null> {
    const searchedAt = this.clock.now();
    const [offer] = await this.client.offers.search(offerQuery(this.criteria), this.patience);
    return offer ? { offer, searchedAt } : null;
  }

  /** Accepts a drawn offer unless another rental of this process is accepting it; one not taken goes back to the pool. */
  private async claimAndTry({ offer, searchedAt }: Drawn, pool?: OfferPool): Promise<RentResult | null> {
    if (!this.timeLeft()) {
      pool?.giveBack(offer);
      return null;
    }
    if (!this.rentals.claimOffer(this.client.apiUrl, offer.id, searchedAt)) return null;
    let rented: RentResult | null = null;
    try {
      rented = await this.tryOffer(offer);
      return rented;
    } finally {
      const taken = rented !== null || this.gone.has(offer.id);
      this.rentals.releaseOffer(this.client.apiUrl, offer.id, taken);
      if (!taken) pool?.giveBack(offer);
    }
  }

  /** How long the rental's calls may wait for the service's rate limit: until its deadline, or an interruption. */
  private get patience(): Patience {
    const bound = `the rental's deadline (deadlineMs ${Math.round((this.deadline - this.started) / 1000)} s)`;
    return { until: this.deadline, bound, onWait: this.options.onWait, signal: this.options.signal };
  }

  /** Accepts one offer, again while the service fails on it and it is still free; null when it vanished. */
  private async tryOffer(offer: Offer): Promise<RentResult | null> {
    for (let failures = 0; this.timeLeft(); failures++) {
      this.failing.begin();
      try {
        const created = await createOnce(
          {
            what: `An instance on offer ${offer.id}`,
            // A rental that needs the key keeps no instance a refusal made: a refusal carries no key.
            send: (token) => this.client.instances.create(offer.id, this.tokenRequest(offer, token), { keepAsRequested: !this.options.requireInstanceKey, patience: this.patience }),
            // The listing cannot filter on `extra_env` (the service lists by the fields of INSTANCE_FIELDS in
            // emulator/domain/instances.ts, not the environment): every page is read. A failed listing throws.
            find: async (token) => (await this.client.instances.list()).find((i) => tokenOfInstance(i) === token) ?? null,
          },
          this.options,
        );
        if (!created.recovered) {
          const { new_contract: id, instance_api_key: key, refusal } = created.answer;
          this.record(offer, "rented", refusal && `kept although the service refused: ${refusal.serviceMessage ?? refusal.message}`);
          return { instanceId: id, instanceApiKey: key, offer, token: created.token, attempts: this.attempts };
        }
        const instance = created.found;
        if (!this.options.requireInstanceKey) {
          this.record(offer, "recovered", `instance ${instance.id} found by its token after the answer was lost`);
          return { instanceId: instance.id, offer, token: created.token, attempts: this.attempts };
        }
        // Ours for certain (its token says so): give it back, and rent the offer again to learn the key.
        await this.giveBack(instance.id, created.token);
        this.failing.answered();
        this.record(offer, "keyless", `instance ${instance.id} found by its token, without its key: destroyed, renting again`);
      } catch (error) {
        if (error instanceof OfferUnavailableError) {
          this.gone.add(offer.id);
          this.failing.answered();
          this.record(offer, "vanished", error.serviceMessage ?? error.message);
          return null;
        }
        if (!(error instanceof NotCreatedError)) throw this.refused(offer, error as Error);
        this.record(offer, "not_created", error.failure?.message ?? error.message);
        this.failing.failed(`offer ${offer.id}`, error.failure ?? error);
        if (!(await this.stillFree(offer))) return null;
        await this.failing.pause(failures);
      }
    }
    return null;
  }

  /** Destroys an instance found without its key, retried while the service fails; one left is an InstanceLeftError. */
  private async giveBack(id: number, token: string): Promise<void> {
    try {
      await destroyRetried(this.client, [id], this.options);
    } catch (error) {
      throw new InstanceLeftError(
        `Instance ${id} was rented, its answer lost (with its key), and destroying it failed: ${(error as Error).message}. ` +
          `It carries token ${token}: \`${sweepCommand(token)}\` destroys it.`,
        id,
        token,
      );
    }
  }

  /** The creation request with the attempt's token in the environment, and the bid for an interruptible offer. */
  private tokenRequest(offer: Offer, token: string): CreateInstanceRequest {
    return { ...withBid(this.request, this.criteria, offer), env: { ...this.request.env, [TOKEN_ENV]: token } };
  }

  private async stillFree(offer: Offer): Promise<boolean> {
    const [found] = await this.client.offers.search(offerQuery({ ...this.criteria, offerId: offer.id }), this.patience);
    if (found) return true;
    this.gone.add(offer.id);
    this.record(offer, "vanished", "taken while the service was failing");
    return false;
  }

  private record(offer: Offer, outcome: RentAttempt["outcome"], detail?: string): void {
    const attempt = { offerId: offer.id, outcome, atMs: this.clock.now() - this.started, ...(detail && { detail }) };
    this.attempts.push(attempt);
    this.options.onAttempt?.(attempt);
  }

  private timeLeft(): boolean {
    return this.clock.now() < this.deadline;
  }

  /** Once interrupted, no offer is searched or accepted any more. */
  private throwIfInterrupted(): void {
    throwIfInterrupted(this.options.signal, `nothing was rented (${this.attempts.length} attempt(s) made)`);
  }

  /** A refusal (a bad request, a key without permission): retrying cannot help, so it ends the rental. */
  private refused(offer: Offer, error: Error): Error {
    if (error instanceof BadRequestError && this.criteria.type === "bid") {
      error.message += ` (offer ${offer.id}: a bid must be at least the offer's min_bid; raise maxPricePerHour)`;
    }
    // The service's limit holds the rental back past its deadline: nothing was made, the offer is left for others.
    if (error instanceof RateLimitedError) error.message += ` Nothing was rented (offer ${offer.id} is left for others).`;
    return error;
  }

  /** Why no instance was rented, and what to do, from what the attempts met. */
  private failure(): RentFailedError {
    const count = (outcome: RentAttempt["outcome"]) => this.attempts.filter((a) => a.outcome === outcome).length;
    const seconds = Math.round((this.clock.now() - this.started) / 1000);
    const tried = this.attempts.map((a) => `${a.offerId} ${a.outcome}${a.detail ? ` (${a.detail})` : ""}`).join("; ");
    let why: string;
    if (this.attempts.length === 0) {
      why = "every matching offer was being rented by another rental of this program";
    } else if (count("not_created") >= count("vanished")) {
      const last = [...this.attempts].reverse().find((a) => a.outcome === "not_created");
      why = `the service kept failing (${last?.detail ?? "errors"}): it is unavailable or overloaded. Try again later`;
    } else if (this.criteria.offerId !== undefined) {
      why = "another tenant rented it first. Pick another offer, or rent by criteria instead of offerId";
    } else {
      why = `${count("vanished")} offer(s) were taken by other tenants before they could be accepted: the market is busy. ` +
        "Try again, widen the criteria, or give the rental a longer deadline (deadlineMs)";
    }
    const scope = this.criteria.offerId !== undefined ? `offer ${this.criteria.offerId}` : "an instance";
    return new RentFailedError(`Could not rent ${scope} in ${seconds} s: ${why}. Attempts: ${tried || "none"}.`, this.attempts);
  }
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
  return new NoMatchingOfferError(`${noMatchText(criteria)}. ${WIDEN_CRITERIA}`);
}

