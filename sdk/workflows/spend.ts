import type { GpuRentalClient } from "../client";
import { GpuRentalError } from "../errors";
import type { Instance } from "../schemas";
import { durationSeconds } from "./watchdog";
import { hasPrefix, tokenOfInstance } from "./tokens";
import { ownerOf, StackHoldings } from "./stack-holdings";
import { offerQuery, OfferCriteria } from "./criteria";

/**
 * What the account is paying for: every instance, what it costs per hour now, and what it has cost so far (the
 * billing view's figure, so the two always agree). Instances that ended (destroyed, by a user or by their own
 * watchdog) are listed from the billing view with their end, at 0 $/hour.
 */
export interface SpendLine {
  id: number;
  label: string | null;
  /** The creation token (`GPU_RENTAL_TOKEN`): the stack or run that made it. Null when not known (ended, or made elsewhere). */
  token: string | null;
  /** `running`, `stopped` (disk still charged), a failure status, or `ended` (no longer exists). */
  state: string;
  /**
   * Whose it is: `held` by the state of `stack`, an `orphan` of `stack` (it carries the stack's creation token, its
   * state does not hold it), made by `gpu-rental` otherwise (another stack's or run's token), or `other` (no token:
   * not made by gpu-rental). Null for an ended one. Stacks are known only when the report is given them.
   */
  ownership: "held" | "orphan" | "gpu-rental" | "other" | null;
  /** The stack (`project/stack`) it is held by or an orphan of. */
  stack: string | null;
  /** Seconds since the instance was created (for an ended one: from its first charge to its end). */
  ageSeconds: number;
  /** What it costs per hour now: compute and disk while running, disk only when stopped, nothing once ended. */
  pricePerHour: number;
  /** What it has cost so far, $ (the billing view's charge for it). */
  accrued: number;
  /** When it ended, epoch seconds (ended ones only). */
  endedAt: number | null;
  /**
   * Seconds it spent stopped since its creation (live ones): its age less the hours of compute its charge holds.
   * For an instance stopped once, the time since it stopped.
   */
  stoppedSeconds?: number;
}

export interface SpendReport {
  instances: SpendLine[];
  /** $/hour of everything listed. */
  totalPerHour: number;
  /** $ accrued by everything listed. */
  totalAccrued: number;
}

export interface SpendFilter {
  /** Older than this duration (`"6h"`). */
  olderThan?: string;
  label?: string;
  tokenPrefix?: string;
  /** Leave out instances that ended. */
  liveOnly?: boolean;
}

const round = (n: number) => Number(n.toFixed(6));

/**
 * The account's spend, as `gpu-rental spend` shows it. Needs a key that may read billing. With `stacks` (what their
 * states hold: stackHoldings), each instance says whether a stack holds it or it is an orphan of one.
 */
export async function spendReport(client: GpuRentalClient, filter: SpendFilter = {}, stacks: readonly StackHoldings[] = []): Promise<SpendReport> {
  const [instances, invoices] = await Promise.all([client.instances.list(), client.billing.invoices()]);
  const charged = new Map<number, { amount: number; start: number; end: number }>();
  for (const row of invoices.invoices) {
    if (row.type === "charge" && typeof row.instance_id === "number") charged.set(row.instance_id, { amount: row.amount, start: row.start, end: row.end });
  }
  // The service's time: the end of a live instance's charge is when the view was read (the service bills as it goes).
  const now = Math.max(0, ...[...charged.values()].map((c) => c.end)) || Date.now() / 1000;
  const live = instances.map((instance) => {
    const line = withStoppedTime(liveLine(instance, charged.get(instance.id)?.amount ?? 0, now), instance);
    return { ...line, ...ownerOf(line.token, line.id, stacks, (stack) => stack.instances) };
  });
  const liveIds = new Set(live.map((line) => line.id));
  const ended: SpendLine[] = [...charged].filter(([id]) => !liveIds.has(id)).map(([id, c]) => ({
    id, label: null, token: null, ownership: null, stack: null, state: "ended", ageSeconds: Math.max(0, c.end - c.start), pricePerHour: 0, accrued: c.amount, endedAt: c.end,
  }));
  const lines = [...live, ...(filter.liveOnly ? [] : ended)].filter(matcher(filter)).sort((a, b) => a.id - b.id);
  return {
    instances: lines,
    totalPerHour: round(lines.reduce((sum, line) => sum + line.pricePerHour, 0)),
    totalAccrued: round(lines.reduce((sum, line) => sum + line.accrued, 0)),
  };
}

/** Time stopped = age − compute hours, where accrued = compute rate × compute hours + disk rate × age. */
function withStoppedTime(line: SpendLine, instance: Instance): SpendLine {
  const total = instance.dph_total ?? 0;
  const compute = (instance as { dph_base?: number }).dph_base ?? 0;
  if (!(compute > 0)) return line;
  const computeHours = Math.max(0, (line.accrued - (total - compute) * (line.ageSeconds / 3600)) / compute);
  return { ...line, stoppedSeconds: Math.max(0, Math.round(line.ageSeconds - computeHours * 3600)) };
}

function liveLine(instance: Instance, accrued: number, now: number): SpendLine {
  const state = instance.actual_status === "exited" && instance.cur_state === "stopped" ? "stopped" : (instance.actual_status ?? "provisioning");
  const total = instance.dph_total ?? 0;
  const compute = (instance as { dph_base?: number }).dph_base ?? total;
  const computing = instance.cur_state === "running" && !["exited", "unknown", "offline"].includes(instance.actual_status ?? "");
  return {
    id: instance.id,
    label: instance.label ?? null,
    token: tokenOfInstance(instance) ?? null,
    ownership: null,
    stack: null,
    state,
    ageSeconds: Math.max(0, now - ((instance as { start_date?: number }).start_date ?? now)),
    pricePerHour: round(computing ? total : Math.max(0, total - compute)),
    accrued: round(accrued),
    endedAt: null,
  };
}

function matcher(filter: SpendFilter): (line: SpendLine) => boolean {
  const olderThan = filter.olderThan === undefined ? undefined : durationSeconds(filter.olderThan, "--older-than");
  return (line) =>
    (olderThan === undefined || line.ageSeconds >= olderThan) &&
    (filter.label === undefined || line.label === filter.label) &&
    (filter.tokenPrefix === undefined || hasPrefix(line.token ?? undefined, filter.tokenPrefix));
}

/** A rental refused by `maxHourlySpend`: what counted, and the cap. Nothing was rented. */
export class SpendCapError extends GpuRentalError {
  override name = "SpendCapError";
  constructor(
    message: string,
    readonly counted: { id: number; label: string | null; pricePerHour: number }[],
    readonly cap: number,
  ) {
    super(message);
  }
}

/**
 * What the account pays per hour now for the instances that count against `maxHourlySpend`: every instance of
 * the account, not only this stack's or run's (the bill is the account's, and another stack's instances are
 * spent money too). Running ones count compute and disk; stopped ones their disk.
 */
export async function hourlySpend(client: GpuRentalClient): Promise<{ counted: SpendLine[]; total: number }> {
  const now = Date.now() / 1000;
  const counted = (await client.instances.list()).map((instance) => liveLine(instance, 0, now)).filter((line) => line.pricePerHour > 0);
  return { counted, total: round(counted.reduce((sum, line) => sum + line.pricePerHour, 0)) };
}

/** What a refusal's message says became of the rental: refused now, or (a preview's warning) refused by `up`. */
const NOTHING_RENTED = "Nothing was rented.";
const UP_WILL_REFUSE = "`pulumi up` will refuse it: nothing will be rented.";

/**
 * The most the next `count` rentals may cost per hour each under `cap`, or a SpendCapError naming what counts
 * when not even the cheapest fits (`cheapest`, $/hour, when known).
 */
export async function spendHeadroom(
  client: GpuRentalClient, cap: number, count = 1, outcome = NOTHING_RENTED,
): Promise<{ perRental: number; counted: SpendLine[]; total: number }> {
  const { counted, total } = await hourlySpend(client);
  const perRental = round((cap - total) / count);
  if (perRental <= 0) throw capError(cap, counted, total, count, undefined, outcome);
  return { perRental, counted, total };
}

export function capError(cap: number, counted: SpendLine[], total: number, count: number, cheapest?: number, outcome = NOTHING_RENTED): SpendCapError {
  const list = counted.map((line) => `${line.id}${line.label ? ` "${line.label}"` : ""} ${line.state} $${line.pricePerHour}/h`).join(", ");
  const what = count > 1 ? `${count} instances` : "this instance";
  const need = cheapest !== undefined ? ` (the cheapest matching offer is $${cheapest}/h${count > 1 ? " each" : ""})` : "";
  return new SpendCapError(
    `Renting ${what} would take the account over maxHourlySpend $${cap}/h: it pays $${total}/h now${list ? ` for ${list}` : ""}, ` +
      `leaving $${round(Math.max(0, cap - total))}/h${need}. ${outcome} Stop or destroy instances (gpu-rental spend lists them), or raise the cap.`,
    counted.map(({ id, label, pricePerHour }) => ({ id, label, pricePerHour })),
    cap,
  );
}

/**
 * The criteria of `count` rentals limited to what `cap` leaves: each at most an equal share of the headroom (so
 * together they stay under it, whichever offers they get). Refuses (SpendCapError, before anything is rented)
 * when the market has `count` matching offers but not under that share. The price counted is the offer's
 * `dph_total` (compute and its default disk).
 */
export async function criteriaUnderCap(
  client: GpuRentalClient, criteria: OfferCriteria, cap: number, count = 1, outcome = NOTHING_RENTED,
): Promise<OfferCriteria> {
  const { perRental, counted, total } = await spendHeadroom(client, cap, count, outcome);
  const limited = { ...criteria, maxPricePerHour: Math.min(criteria.maxPricePerHour ?? Infinity, perRental) };
  const under = await client.offers.search({ ...offerQuery(limited), limit: count });
  if (under.length >= count) return limited;
  const any = await client.offers.search({ ...offerQuery(criteria), limit: count });
  // Too few offers at any price is not the cap's doing: the rental says so itself.
  if (any.length < count) return limited;
  throw capError(cap, counted, total, count, any[0].dph_total, outcome);
}

/**
 * For `pulumi preview`: the warning that `up` will refuse `count` rentals of `criteria` under `cap`, from the same
 * decision `up` makes (criteriaUnderCap, against what the account pays and the market now). None without a cap.
 */
export async function capWarnings(client: GpuRentalClient, criteria: OfferCriteria, cap: number | undefined, count = 1): Promise<string[]> {
  if (cap === undefined || count < 1) return [];
  try {
    await criteriaUnderCap(client, criteria, cap, count, UP_WILL_REFUSE);
    return [];
  } catch (error) {
    if (error instanceof SpendCapError) return [error.message];
    throw error;
  }
}
