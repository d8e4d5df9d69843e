import { GpuRentalError, NetworkError, ServerError } from "../errors";
import { newToken } from "./tokens";

export interface CreationOptions {
  /**
   * How long to look for the thing after a request that may still be in flight (the client gave up waiting for
   * the answer) before taking it as not made. Default 30 s.
   */
  lateCreationWindowMs?: number;
  /** Prefix of the creation tokens (`sweep` finds what a crashed run left by it). Default `gr`. */
  tokenPrefix?: string;
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
    super(message, failure?.status, failure?.code, failure?.serviceMessage, failure?.request);
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
 * Sends one creation with a fresh token. When its outcome is unknown (no answer in time, a reset, a lost
 * answer, a 5xx), it is resolved by that token before anything else happens: found, it is the result; certainly
 * absent, a NotCreatedError says it is safe to try again. A refusal (4xx) is thrown as it is: nothing was made.
 */
export async function createOnce<Answer, Found>(creation: Creation<Answer, Found>, options: CreationOptions = {}): Promise<Created<Answer, Found>> {
  const token = newToken(options.tokenPrefix);
  try {
    return { token, recovered: false, answer: await creation.send(token) };
  } catch (error) {
    if (!(error instanceof NetworkError || error instanceof ServerError)) throw error;
    const found = await lookFor(creation, token, stillInFlight(error) ? (options.lateCreationWindowMs ?? 30_000) : 1_000);
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
async function lookFor<Found>(creation: Creation<unknown, Found>, token: string, windowMs: number): Promise<Found | null> {
  const until = Date.now() + windowMs;
  for (let delay = 250; ; delay = Math.min(delay * 1.6, 4_000)) {
    let found: Found | null;
    try {
      found = await creation.find(token);
    } catch (error) {
      throw new OutcomeUnknownError(
        `${creation.what}: the outcome is unknown, and the service stopped answering while it was looked for (${(error as Error).message}). ` +
          `It may exist, carrying token ${token}: sweep(client, { tokens: ["${token}"] }) finds and removes it once the service answers.`,
        token,
      );
    }
    if (found) return found;
    if (Date.now() + delay > until) return null;
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** Waits before trying a creation again after `tries` certain failures: doubling from 250 ms to 5 s, jittered. */
export function retryPause(tries: number): Promise<void> {
  const ms = Math.min(250 * 2 ** tries, 5_000) * (0.5 + Math.random());
  return new Promise((resolve) => setTimeout(resolve, ms));
}
