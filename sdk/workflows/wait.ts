import { GpuRentalClient } from "../client";
import { Clock, REAL_TIME } from "../clock";
import { GpuRentalError, isTransient, ListingError, NotFoundError } from "../errors";
import { FAILED_STATUSES, Instance } from "../schemas";
import { InterruptedError, untilInterrupted } from "./interruption";

export type WaitTarget = "running" | "stopped";

/** Time as a wait sees it (../clock.ts): real time by default; a simulated clock in benchmarks and tests. */
export type WaitClock = Clock;

export interface WaitOptions {
  /** Give up after this long. Default 10 minutes (boot typically takes 1-5). */
  timeoutMs?: number;
  /**
   * Time between polls after the first. Default 2 s: the instance is seen running at most 2 s after it is, at
   * 0.5 requests/s however long the boot (nothing in a boot tells how long the rest will take, so no other
   * schedule does better on both counts).
   */
  pollMs?: number;
  /**
   * When the first poll comes. Default at once: an instance that is already there (a quick boot, a stop that
   * took effect) is seen without waiting a whole interval; the polls after it keep the cadence.
   */
  firstPollMs?: number;
  onPoll?: (instance: Instance) => void;
  clock?: WaitClock;
  /** Aborted: the wait ends at once, each instance not there yet with an InterruptedError. */
  signal?: AbortSignal;
}

/** The instance reached a state from which it never reaches the one waited for. */
export class InstanceFailedError extends GpuRentalError {
  override name = "InstanceFailedError";
  constructor(
    message: string,
    readonly instance: Instance,
  ) {
    super(message);
  }
}

export class WaitTimeoutError extends GpuRentalError {
  override name = "WaitTimeoutError";
}

/** Whether the instance is in the state waited for. */
export function hasReached(instance: Instance, target: WaitTarget): boolean {
  if (target === "running") return instance.actual_status === "running" && instance.cur_state !== "stopped";
  return instance.cur_state === "stopped" || instance.intended_status === "stopped";
}

/** How one instance's wait ended: there, or the error that ended it (failed, gone, timed out). */
export type WaitOutcome = { id: number; instance: Instance; error?: undefined } | { id: number; instance?: Instance; error: GpuRentalError };

/**
 * Polls an instance, just asked to start or stop, until it reaches `target`. Fails fast on `exited`, `unknown`
 * or `offline` when waiting for `running` (from those it never gets there; seen on two polls in a row), and
 * when the instance disappears. One request a poll (`GET /instances/{id}/`). A poll the service fails (429, 5xx,
 * a reset) says nothing of the instance: the next poll comes as planned, until the timeout.
 */
export async function waitForStatus(
  client: GpuRentalClient,
  id: number,
  target: WaitTarget,
  options: WaitOptions = {},
): Promise<Instance> {
  const [outcome] = await pollUntilSettled([id], target, async () => {
    const instance = await client.instances.get(id);
    return new Map(instance ? [[id, instance]] : []);
  }, options);
  if (outcome.error) throw outcome.error;
  return outcome.instance;
}

/**
 * Waits for many instances at once (a fleet) with one listing a poll (`client.instances.list()`), however many
 * they are. Never throws for one instance: each outcome says whether it got there, in the order of `ids`.
 */
export async function waitForInstances(
  client: GpuRentalClient,
  ids: readonly number[],
  target: WaitTarget,
  options: WaitOptions = {},
): Promise<WaitOutcome[]> {
  if (!ids.length) return [];
  const wanted = new Set(ids);
  return pollUntilSettled(ids, target, async () => {
    const listed = await client.instances.list();
    return new Map(listed.filter((i) => wanted.has(i.id)).map((i) => [i.id, i]));
  }, options);
}

/**
 * The one polling loop: `look` answers the instances it sees, once a poll. Polls fall on a fixed cadence from
 * the start (the first at `firstPollMs`, then every `pollMs`), so a slow answer does not push the next one back.
 */
async function pollUntilSettled(
  ids: readonly number[],
  target: WaitTarget,
  look: () => Promise<Map<number, Instance>>,
  options: WaitOptions,
): Promise<WaitOutcome[]> {
  const clock = options.clock ?? REAL_TIME;
  const interval = options.pollMs ?? 2_000;
  const first = Math.min(options.firstPollMs ?? 0, interval);
  const timeoutMs = options.timeoutMs ?? 600_000;
  const started = clock.now();
  const outcomes = new Map<number, WaitOutcome>();
  const last = new Map<number, Instance>();
  // A failure status must be seen twice in a row: just after a start, a stopped instance may still report the
  // `exited` of its stop for a moment.
  const failedPolls = new Map<number, number>();
  const pending = () => ids.filter((id) => !outcomes.has(id));
  const endPending = (error: (id: number) => GpuRentalError) => pending().forEach((id) => outcomes.set(id, { id, instance: last.get(id), error: error(id) }));
  // The last poll the service failed (cleared by one it answered): a timeout says so.
  let failure: GpuRentalError | undefined;
  for (let poll = 0; pending().length; poll++) {
    const next = started + first + poll * interval;
    if (poll > 0 && next - started > timeoutMs) {
      endPending((id) => {
        const status = last.get(id)?.actual_status ?? "null";
        const failing = failure ? `; the service failed the last poll: ${failure.message}` : "";
        return new WaitTimeoutError(`Instance ${id} did not reach ${target} in ${Math.round(timeoutMs / 1000)} s (last status: ${status}${failing}).`);
      });
      break;
    }
    let seen: Map<number, Instance>;
    try {
      await untilInterrupted(clock.sleep(Math.max(0, next - clock.now())), options.signal, 0, `stopped waiting for ${target}`);
      seen = await untilInterrupted(look(), options.signal, 0, `stopped waiting for ${target}`);
      failure = undefined;
    } catch (error) {
      if (error instanceof InterruptedError) {
        endPending((id) => new InterruptedError(`Interrupted: stopped waiting for instance ${id} to reach ${target} (last status: ${last.get(id)?.actual_status ?? "null"}).`));
        break;
      }
      if (!transientPoll(error)) throw error;
      failure = error as GpuRentalError;
      continue;
    }
    for (const id of pending()) {
      const instance = seen.get(id);
      if (!instance) {
        outcomes.set(id, { id, error: new NotFoundError(`Instance ${id} no longer exists (it was destroyed while waiting for ${target}).`) });
        continue;
      }
      last.set(id, instance);
      options.onPoll?.(instance);
      if (hasReached(instance, target)) {
        outcomes.set(id, { id, instance });
        continue;
      }
      const failed = target === "running" && !!instance.actual_status && FAILED_STATUSES.includes(instance.actual_status);
      const count = failed ? (failedPolls.get(id) ?? 0) + 1 : 0;
      failedPolls.set(id, count);
      if (count >= 2) {
        const why = `Instance ${id} is ${instance.actual_status}${instance.status_msg ? ` (${instance.status_msg})` : ""} and will not reach running.`;
        outcomes.set(id, { id, instance, error: new InstanceFailedError(why, instance) });
      }
    }
  }
  return ids.map((id) => outcomes.get(id)!);
}

/** A poll the service failed on its own (a listing's failed page included): no news of the instances. */
function transientPoll(error: unknown): boolean {
  return isTransient(error) || (error instanceof ListingError && isTransient(error.cause));
}
