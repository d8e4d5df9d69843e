import type { PendingPriceIncrease } from "../../sdk/schemas";
import { badRequest, notFound } from "./errors";
import { diskOf } from "./instances";
import { storagePerHour } from "./offers";
import type { InstanceRecord, PriceIncrease } from "./records";

/*
 * Hosts raising a running contract's GPU rate (the control API plays the host): the raise waits for the renter,
 * who accepts it (the new rate from the contract's current end date, to the new ask's end) or rejects it (the
 * contract runs to its end at its rate). Kept on the instance record, so saves and restores keep it.
 */

const ASK_EXTENSION_S = 30 * 86_400;
const SECONDS_PER_HOUR = 3_600;

export const priceIncreases = {
  /** The host raises the GPU rate by `factor`; one raise of a contract waits at a time. */
  raise(instance: InstanceRecord, factor: number, now: number): PriceIncrease {
    if (!(factor > 1)) throw badRequest("invalid_args", "A price increase multiplies the rate by more than 1.");
    const raises = instance.priceIncreases ?? [];
    if (raises.some((r) => r.state === "pending")) throw badRequest("invalid_args", `Instance ${instance.id} has a pending price increase already.`);
    const contractEnd = instance.offer.end_date ?? null;
    const raise: PriceIncrease = {
      id: instance.id * 1_000 + raises.length + 1,
      state: "pending",
      createdAt: now,
      oldPricePerHour: instance.pricePerHour,
      newPricePerHour: Number((instance.pricePerHour * factor).toFixed(6)),
      contractEnd,
      askEnd: contractEnd === null ? null : contractEnd + ASK_EXTENSION_S,
    };
    instance.priceIncreases = [...raises, raise];
    return raise;
  },

  /** The pending raises of `instances`, as the service lists them. */
  pending(instances: readonly InstanceRecord[]): PendingPriceIncrease[] {
    return instances.flatMap((instance) => (instance.priceIncreases ?? []).filter((r) => r.state === "pending").map((r) => row(instance, r)));
  },

  /**
   * Accepts or rejects a pending raise of one of `instances`: an accepted rate is billed from the contract's end
   * (at once for a contract without one). A raise that is not pending (decided, or another's) is stale: 404.
   */
  decide(instances: readonly InstanceRecord[], id: number, decision: "accepted" | "rejected", now: number): InstanceRecord {
    for (const instance of instances) {
      const raise = instance.priceIncreases?.find((r) => r.id === id && r.state === "pending");
      if (!raise) continue;
      raise.state = decision;
      if (decision === "accepted") instance.nextPrice = { from: raise.contractEnd === null ? now : raise.contractEnd * 1_000, pricePerHour: raise.newPricePerHour };
      return instance;
    }
    throw notFound("no_pending_price_increase", `No pending price increase ${id}: it was accepted or rejected already, or is not yours. List them again.`);
  },
};

/** A raise as the service lists it: per-second GPU and disk rates, bandwidth rates unchanged. */
function row(instance: InstanceRecord, raise: PriceIncrease): PendingPriceIncrease {
  const disk = storagePerHour(instance.offer, diskOf(instance)) / SECONDS_PER_HOUR;
  const bwu = numberOrNull(instance.offer.inet_up_cost);
  const bwd = numberOrNull(instance.offer.inet_down_cost);
  return {
    pending_price_increase_id: raise.id,
    contract_id: instance.id,
    host_id: numberOrNull(instance.offer.host_id),
    old_gpu_costpersec: raise.oldPricePerHour / SECONDS_PER_HOUR,
    new_gpu_costpersec: raise.newPricePerHour / SECONDS_PER_HOUR,
    old_disk_ram_costpersec: disk,
    new_disk_ram_costpersec: disk,
    old_bwu_cost: bwu,
    new_bwu_cost: bwu,
    old_bwd_cost: bwd,
    new_bwd_cost: bwd,
    old_platform_fee: null,
    new_platform_fee: null,
    contract_end_date: raise.contractEnd,
    ask_end_date: raise.askEnd,
    created_at: raise.createdAt / 1_000,
  };
}

const numberOrNull = (value: unknown): number | null => (typeof value === "number" ? value : null);
