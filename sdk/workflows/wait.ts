import { GpuRentalClient } from "../client";
import { GpuRentalError, NotFoundError } from "../errors";
import { FAILED_STATUSES, Instance } from "../schemas";

export type WaitTarget = "running" | "stopped";

export interface WaitOptions {
  /** Give up after this long. Default 10 minutes (boot typically takes 1-5). */
  timeoutMs?: number;
  /** First poll interval; it grows ×1.5 up to `maxPollMs`. Default 250 ms. */
  pollMs?: number;
  maxPollMs?: number;
  onPoll?: (instance: Instance) => void;
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
 * Polls an instance with backoff until it reaches `target`. Fails fast on `exited`, `unknown` or `offline`
 * when waiting for `running` (the spec: from those it never gets there; seen on two polls in a row), and when
 * the instance disappears.
 */
export async function waitForStatus(
  client: GpuRentalClient,
  id: number,
  target: WaitTarget,
  options: WaitOptions = {},
): Promise<Instance> {
  const deadline = Date.now() + (options.timeoutMs ?? 600_000);
  let delay = options.pollMs ?? 250;
  let last: Instance | null = null;
  // A failure status must be seen twice in a row: just after a start, a stopped instance may still report the
  // `exited` of its stop for a moment.
  let failedPolls = 0;
  for (;;) {
    last = await client.getInstance(id);
    if (!last) throw new NotFoundError(`Instance ${id} no longer exists (it was destroyed while waiting for ${target}).`);
    options.onPoll?.(last);
    if (hasReached(last, target)) return last;
    const failed = target === "running" && !!last.actual_status && FAILED_STATUSES.includes(last.actual_status);
    failedPolls = failed ? failedPolls + 1 : 0;
    if (failedPolls >= 2) {
      throw new InstanceFailedError(
        `Instance ${id} is ${last.actual_status}${last.status_msg ? ` (${last.status_msg})` : ""} and will not reach running.`,
        last,
      );
    }
    if (Date.now() + delay > deadline) {
      throw new WaitTimeoutError(
        `Instance ${id} did not reach ${target} in ${Math.round((options.timeoutMs ?? 600_000) / 1000)} s ` +
          `(last status: ${last.actual_status ?? "null"}).`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 1.5, options.maxPollMs ?? 5_000);
  }
}
