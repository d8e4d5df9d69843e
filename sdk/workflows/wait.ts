import { GpuRentalClient } from "../client";
import { GpuRentalError, NotFoundError } from "../errors";
import { FAILED_STATUSES, Instance } from "../schemas";

export type WaitTarget = "running" | "stopped";

/** Time as a wait sees it: real time by default; a simulated clock in benchmarks and tests. */
export interface WaitClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const REAL_TIME: WaitClock = { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

export interface WaitOptions {
  /** Give up after this long. Default 10 minutes (boot typically takes 1-5). */
  timeoutMs?: number;
  /**
   * Time between polls. Default 2 s: the instance is seen running at most 2 s after it is, at 0.5 requests/s
   * however long the boot (nothing in a boot tells how long the rest will take, so no other schedule does
   * better on both counts).
   */
  pollMs?: number;
  onPoll?: (instance: Instance) => void;
  clock?: WaitClock;
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

/**
 * Polls an instance, just asked to start or stop, until it reaches `target`. Polls fall on a fixed cadence from
 * the start (the first one poll interval in: the instance was just asked to change), so a slow answer does not
 * push the next poll back. Fails fast on `exited`, `unknown` or `offline` when waiting for `running` (the spec:
 * from those it never gets there; seen on two polls in a row), and when the instance disappears.
 */
export async function waitForStatus(
  client: GpuRentalClient,
  id: number,
  target: WaitTarget,
  options: WaitOptions = {},
): Promise<Instance> {
  const clock = options.clock ?? REAL_TIME;
  const interval = options.pollMs ?? 2_000;
  const timeoutMs = options.timeoutMs ?? 600_000;
  const started = clock.now();
  // A failure status must be seen twice in a row: just after a start, a stopped instance may still report the
  // `exited` of its stop for a moment.
  let failedPolls = 0;
  for (let poll = 1; ; poll++) {
    const next = started + poll * interval;
    if (next - started > timeoutMs) {
      const last = await client.instances.get(id);
      throw new WaitTimeoutError(
        `Instance ${id} did not reach ${target} in ${Math.round(timeoutMs / 1000)} s (last status: ${last?.actual_status ?? "null"}).`,
      );
    }
    await clock.sleep(Math.max(0, next - clock.now()));
    const instance = await client.instances.get(id);
    if (!instance) throw new NotFoundError(`Instance ${id} no longer exists (it was destroyed while waiting for ${target}).`);
    options.onPoll?.(instance);
    if (hasReached(instance, target)) return instance;
    const failed = target === "running" && !!instance.actual_status && FAILED_STATUSES.includes(instance.actual_status);
    failedPolls = failed ? failedPolls + 1 : 0;
    if (failedPolls >= 2) {
      throw new InstanceFailedError(
        `Instance ${id} is ${instance.actual_status}${instance.status_msg ? ` (${instance.status_msg})` : ""} and will not reach running.`,
        instance,
      );
    }
  }
}
