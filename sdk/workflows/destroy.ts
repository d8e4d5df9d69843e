import type { GpuRentalClient } from "../client";
import { deletedOrGone, GpuRentalError, isTransient, serviceDetails } from "../errors";
import { CreationOptions, FailureBudget, ServiceFailingError } from "./create-once";
import { InterruptedError } from "./interruption";

/** Instances that could not be destroyed: `left`, and the failure that stopped the tries. */
export class NotDestroyedError extends GpuRentalError {
  override name = "NotDestroyedError";
  constructor(
    readonly left: number[],
    readonly failure: Error,
  ) {
    super(`instance(s) ${left.join(", ")} could not be destroyed (${failure.message})`, failure instanceof GpuRentalError ? serviceDetails(failure) : {});
  }
}

/**
 * Destroys instances (one already gone counts as destroyed), again while the service fails on its own, for as long
 * as its failure budget allows (`serviceFailureBudgetMs`, default 60 s); a NotDestroyedError names what is left.
 */
export async function destroyRetried(client: GpuRentalClient, ids: readonly number[], options: CreationOptions = {}): Promise<void> {
  let left = [...ids];
  const failing = new FailureBudget(options, `destroying instance(s) ${ids.join(", ")}`);
  for (let tries = 1; left.length; tries++) {
    const results = await Promise.allSettled(left.map((id) => deletedOrGone(() => client.instances.destroy(id))));
    const failed = results.flatMap((r, i) => (r.status === "rejected" ? [{ id: left[i], error: r.reason as Error }] : []));
    if (!failed.length) return;
    left = failed.map((f) => f.id);
    const { error } = failed[0];
    if (!isTransient(error)) throw new NotDestroyedError(left, error);
    try {
      failing.failed(`try ${tries}`, error as GpuRentalError);
      await failing.pause(tries);
    } catch (stopped) {
      throw stopped instanceof ServiceFailingError || stopped instanceof InterruptedError ? new NotDestroyedError(left, error) : stopped;
    }
  }
}
