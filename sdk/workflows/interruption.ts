import { Clock, REAL_TIME } from "../clock";
import { GpuRentalError } from "../errors";

/**
 * Stopping work part-way, as a cancelled CI job or Ctrl-C asks: the workflows take an AbortSignal. Once it is
 * aborted nothing more is sent; a creation request already sent is given a short grace to answer (its object may
 * exist, and an answer says which); waits end at once.
 */
export interface InterruptOptions {
  /** Aborted: stop. */
  signal?: AbortSignal;
  /** How long a creation request already sent may still take to answer once the signal is aborted. Default 5 s. */
  interruptGraceMs?: number;
}

export const DEFAULT_INTERRUPT_GRACE_MS = 5_000;

/**
 * The work was interrupted (its signal aborted). `token`, when set, is the creation token of an object that may
 * exist: its request was sent and the answer did not come in time.
 */
export class InterruptedError extends GpuRentalError {
  override name = "InterruptedError";
  constructor(
    message: string,
    readonly token?: string,
  ) {
    super(message);
  }
}

/** Throws an InterruptedError (`what` says what was not done) once the signal is aborted. */
export function throwIfInterrupted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new InterruptedError(`Interrupted: ${what}.`);
}

/** Waits `ms` on `clock`; an abort ends the wait at once with an InterruptedError. */
export function pauseUnlessInterrupted(ms: number, signal: AbortSignal | undefined, what = "stopped waiting", clock: Clock = REAL_TIME): Promise<void> {
  return untilInterrupted(clock.sleep(ms), signal, 0, what);
}

/**
 * What `work` gives, unless the signal is aborted first: then it still has `graceMs` to finish (a request already
 * sent whose answer says what exists), after which the InterruptedError (`what`, `token`) is thrown instead.
 */
export function untilInterrupted<T>(work: Promise<T>, signal: AbortSignal | undefined, graceMs: number, what: string, token?: string): Promise<T> {
  if (!signal) return work;
  const interrupted = () => new InterruptedError(`Interrupted: ${what}.`, token);
  if (signal.aborted && graceMs === 0) return Promise.reject(interrupted());
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      timer = setTimeout(() => reject(interrupted()), graceMs);
    };
    const done = () => {
      signal.removeEventListener("abort", onAbort);
      if (timer) clearTimeout(timer);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        done();
        resolve(value);
      },
      (error) => {
        done();
        reject(error);
      },
    );
  });
}
