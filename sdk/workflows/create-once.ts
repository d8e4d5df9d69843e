import { Clock, REAL_TIME } from "../clock";
import { GpuRentalError, NetworkError, ServerError, serviceDetails } from "../errors";
import { DEFAULT_INTERRUPT_GRACE_MS, InterruptedError, InterruptOptions, throwIfInterrupted, untilInterrupted } from "./interruption";
import { newToken, sweepCommand } from "./tokens";

export interface CreationOptions extends InterruptOptions {
  /**
   * How long to look for the thing after a request that may still be in flight (the client gave up waiting for
   * the answer) before taking it as not made. Default 30 s.
   */
  lateCreationWindowMs?: number;
  /** Prefix of the creation tokens (`sweep` finds what a crashed run left by it). Default `gr`. */
  tokenPrefix?: string;
  /**
   * The token to create with, instead of a fresh one (a Pulumi resource's, derived from its URN: resourceToken).
   * The caller makes sure nothing carries it yet: an earlier, cut-off attempt's object is found by it.
   */
  token?: string;
  /**
   * How long the service may fail on its own (5xx, timeouts, resets: nothing made) without a single success or
   * refusal in between, before the creation stops with a ServiceFailingError. Separate from the deadline, which
   * is for waiting out a busy market. Default 60 s. It is read as each failure ends and before each pause: a
   * pause that would end past it is not taken, the failure is reported then. With timeouts, the attempt under
   * way may still add its `timeoutMs` and `lateCreationWindowMs`.
   */
  serviceFailureBudgetMs?: number;
  /**
   * The clock of the creation's deadlines and waits (the failure budget, its pauses, the look for a late creation,
   * the rental's time budget). Default real time (tests inject one, a provider its own).
   */
  clock?: Clock;
}

export const DEFAULT_SERVICE_FAILURE_BUDGET_MS = 60_000;

/** The service failed on its own for longer than the failure budget: it is down or overloaded, not busy. */
export class ServiceFailingError extends GpuRentalError {
  override name = "ServiceFailingError";
  constructor(
    message: string,
    /** What was tried, one line an attempt. */
    readonly tried: string[],
    readonly failure: GpuRentalError,
  ) {
    super(message, serviceDetails(failure));
  }
}

/**
 * Consecutive failures of the service itself, by time from the start of the first failed attempt (`begin`):
 * `failed` throws a ServiceFailingError once they have lasted `serviceFailureBudgetMs`, and `pause` (between
 * tries) as soon as the next try could only end after that, so an outage is reported within the budget;
 * `answered` (any sign the service works: a success, a refusal, an offer taken by another tenant) starts the count again.
 */
export class FailureBudget {
  private since: number | undefined;
  private attemptStart: number | undefined;
  private last: GpuRentalError | undefined;
  private readonly tried: string[] = [];
  readonly budgetMs: number;

  private readonly clock: Clock;
  private readonly signal: AbortSignal | undefined;

  constructor(
    options: CreationOptions,
    private readonly what: string,
  ) {
    this.budgetMs = options.serviceFailureBudgetMs ?? DEFAULT_SERVICE_FAILURE_BUDGET_MS;
    this.clock = options.clock ?? REAL_TIME;
    this.signal = options.signal;
  }

  /** An attempt starts: a failure of it counts from here (its request and the look for its token included). */
  begin(): void {
    this.attemptStart = this.clock.now();
  }

  answered(): void {
    this.since = undefined;
    this.last = undefined;
    this.tried.length = 0;
  }

  failed(attempt: string, failure: GpuRentalError): void {
    const now = this.clock.now();
    this.since ??= this.attemptStart ?? now;
    this.last = failure;
    this.tried.push(`${attempt}: ${failure.message}`);
    if (now - this.since >= this.budgetMs) this.report(now);
  }

  /**
   * Waits before the next try after `tries` certain failures: doubling from 250 ms to 5 s, jittered. A pause
   * after which the next try, taking as long as the last one (its request and the look for its token), would end
   * when the budget has run out is not taken: the outage is reported now, within the budget. An interruption
   * (the options' signal) ends it with an InterruptedError: nothing more is tried.
   */
  async pause(tries: number): Promise<void> {
    const ms = Math.min(250 * 2 ** tries, 5_000) * (0.5 + Math.random());
    const now = this.clock.now();
    const lastTry = now - (this.attemptStart ?? now);
    if (this.since !== undefined && now + ms + lastTry - this.since >= this.budgetMs) this.report(now);
    await untilInterrupted(this.clock.sleep(ms), this.signal, 0, "nothing more was tried");
  }

  private report(now: number): never {
    const failure = this.last!;
    const seconds = (now - this.since!) / 1000;
    throw new ServiceFailingError(
      `The service is failing: ${this.what} failed ${this.tried.length} time(s) in a row over ${seconds.toFixed(1)} s with nothing made ` +
        `(last: ${failure.message}). It is down or overloaded, not busy: try again later. Tried: ${this.tried.join("; ")}.`,
      [...this.tried],
      failure,
    );
  }
}

/** One creation: how to send it with a token (its answer), and how to find the thing that carries a token. */
export interface Creation<Answer, Found> {
  /** What is created, for messages: `An instance on offer 123`. */
  what: string;
  send(token: string): Promise<Answer>;
  find(token: string): Promise<Found | null>;
}

/** The creation's answer; or, when the answer was lost, the thing found by its token. */
export type Created<Answer, Found> = { token: string } & ({ recovered: false; answer: Answer } | { recovered: true; found: Found });

/**
 * Nothing usable was made: the service failed and nothing carries the attempt's token (or what was found is
 * unusable and was removed again). Trying again, with a new token, is safe.
 */
export class NotCreatedError extends GpuRentalError {
  override name = "NotCreatedError";
  constructor(
    message: string,
    readonly token: string,
    readonly failure?: GpuRentalError,
  ) {
    super(message, serviceDetails(failure));
  }
}

/** The outcome could not be resolved: the service stopped answering. The thing may exist, carrying `token`. */
export class OutcomeUnknownError extends GpuRentalError {
  override name = "OutcomeUnknownError";
  constructor(
    message: string,
    readonly token: string,
  ) {
    super(message);
  }
}

/**
 * Sends one creation with a fresh token (or `options.token`). When its outcome is unknown (no answer in time, a
 * reset, a lost answer, a 5xx), it is resolved by that token before anything else happens: found, it is the
 * result; certainly absent, a NotCreatedError says it is safe to try again. A refusal (4xx) is thrown as it is:
 * nothing was made. Interrupted (`options.signal`), nothing is sent; a request already sent has
 * `interruptGraceMs` to answer, else an InterruptedError names the token its object may carry.
 */
export async function createOnce<Answer, Found>(creation: Creation<Answer, Found>, options: CreationOptions = {}): Promise<Created<Answer, Found>> {
  const token = options.token ?? newToken(options.tokenPrefix);
  throwIfInterrupted(options.signal, `${creation.what} was not sent`);
  const unanswered = `${creation.what} was sent and not answered in time: it may exist, carrying token ${token} (${sweepCommand(token)} destroys it)`;
  try {
    const answer = await untilInterrupted(creation.send(token), options.signal, options.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS, unanswered, token);
    return { token, recovered: false, answer };
  } catch (error) {
    if (!(error instanceof NetworkError || error instanceof ServerError)) throw error;
    if (options.signal?.aborted) throw new InterruptedError(`Interrupted: ${unanswered} (${error.message})`, token);
    const found = await lookFor(creation, token, stillInFlight(error) ? (options.lateCreationWindowMs ?? 30_000) : 1_000, options);
    if (found) return { token, recovered: true, found };
    throw new NotCreatedError(
      `${creation.what} was not made: ${error.message} (nothing carrying its token ${token} exists).`,
      token,
      error,
    );
  }
}

/**
 * A request the client stopped waiting for may still be carried out later; one the service answered (5xx) or
 * cut (a reset) is over, and only needs a last look.
 */
function stillInFlight(error: GpuRentalError): boolean {
  return error instanceof NetworkError && (error.code === "ECONNABORTED" || error.code === "ETIMEDOUT");
}

/** Looks for the token until `windowMs` has passed, more rarely as time goes on. */
async function lookFor<Found>(creation: Creation<unknown, Found>, token: string, windowMs: number, options: CreationOptions): Promise<Found | null> {
  const clock = options.clock ?? REAL_TIME;
  const until = clock.now() + windowMs;
  for (let delay = 250; ; delay = Math.min(delay * 1.6, 4_000)) {
    let found: Found | null;
    try {
      found = await creation.find(token);
    } catch (error) {
      // A listing that failed is no answer: the thing may exist, so it is never made again.
      throw new OutcomeUnknownError(
        `${creation.what}: the outcome is unknown, and it could not be looked for: ${(error as Error).message} ` +
          `It may exist, carrying token ${token}: \`${sweepCommand(token)}\` (or sweep(client, { tokens: ["${token}"] })) finds and removes it once the service answers.`,
        token,
      );
    }
    if (found) return found;
    if (clock.now() + delay > until) return null;
    await clock.sleep(delay);
  }
}

