import { ServiceError, badRequest } from "./errors";
import type { InstanceRecord, UserRecord } from "./records";

const HOURS_PER_MONTH = 730;

/**
 * The discount of a deposit covering `months` of the instance's rate: the service's points (1 month, 3 months, its
 * maximum), straight lines between them and from none (docs/service-facts.md#prepaid-deposits).
 */
export function discountFor(months: number): number {
  const points: [number, number][] = [[0, 0], [1, 0.2], [3, 0.3], [12, 0.4]];
  if (months >= 12) return 0.4;
  const at = points.findIndex(([m]) => m > months);
  const [[m0, r0], [m1, r1]] = [points[at - 1], points[at]];
  return Number((r0 + ((r1 - r0) * (months - m0)) / (m1 - m0)).toFixed(4));
}

/**
 * Moves `amount` of the owner's credit into the instance's deposit (`PUT /api/v0/instances/prepay/{id}/`,
 * docs/service-facts.md#prepaid-deposits): the discount grows with the months of its rate the deposit covers, up
 * to the service's maximum. More than the credit is refused, and nothing moves.
 */
export function prepay(instance: InstanceRecord, owner: UserRecord, amount: number): { timescale: number; discount_rate: number } {
  if (!(amount > 0)) throw badRequest("invalid_args", "amount must be a positive number of dollars.");
  if (amount > owner.credit) throw new ServiceError("length_required", "insufficient_credit", "Insufficient credit", { credit: Number(owner.credit.toFixed(6)) });
  const deposit = (instance.deposit ??= { remaining: 0, paid: 0, discountRate: 0, months: 0, discounted: 0 });
  owner.credit -= amount;
  deposit.remaining += amount;
  deposit.paid += amount;
  const perMonth = instance.pricePerHour * HOURS_PER_MONTH;
  deposit.months = perMonth > 0 ? deposit.remaining / perMonth : 0;
  deposit.discountRate = discountFor(deposit.months);
  return { timescale: Number(deposit.months.toFixed(4)), discount_rate: deposit.discountRate };
}

/**
 * What of a charge the owner's credit pays: the instance's deposit pays first, its share discounted. Answers the
 * rest (the whole charge without a deposit).
 */
export function drawOnDeposit(instance: InstanceRecord | undefined, amount: number): number {
  const deposit = instance?.deposit;
  if (!deposit || deposit.remaining <= 0 || amount <= 0) return amount;
  const discounted = amount * (1 - deposit.discountRate);
  const drawn = Math.min(deposit.remaining, discounted);
  deposit.remaining -= drawn;
  deposit.discounted += drawn * deposit.discountRate / (1 - deposit.discountRate);
  // What the deposit did not cover is charged at the full rate.
  return (discounted - drawn) / (1 - deposit.discountRate);
}

/** What is left of the deposit goes back to the owner's credit (the instance is destroyed): answers how much. */
export function refundDeposit(instance: InstanceRecord, owner: UserRecord | undefined): number {
  const left = instance.deposit?.remaining ?? 0;
  if (!owner || left <= 0) return 0;
  owner.credit += left;
  instance.deposit!.remaining = 0;
  return left;
}
