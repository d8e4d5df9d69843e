import {
  describeWait, LimitWait,
  destroyRetried, FAILED_STATUSES, GpuRentalError, Instance, InstanceFailedError, InterruptedError, NotDestroyedError, Offer, RentOptions,
  specOfInstance, waitForInstances, waitForStatus, WaitOutcome, WaitTarget, WaitTimeoutError,
} from "../../sdk";
import { instancesCarrying } from "./creation";
import type { Operation } from "./kind";

/**
 * The one rent-and-boot routine of the kinds that rent instances (Instance: one slot; GpuFleet: one a member):
 * take over what a cut-off run of the same creation left, rent the rest, wait for every instance together, destroy
 * those that failed to boot and rent them again elsewhere while the policy allows; all or nothing. And the one
 * mapping of an instance record to the outputs both kinds report.
 */

/** An instance a creation holds: rented now (its offer and key known), or taken over from a cut-off run. */
export interface Held {
  /** Its slot: 0 for an Instance, the member's index for a fleet. */
  index: number;
  instanceId: number;
  offer: Offer | null;
  key: string | null;
  /** The creation token it carries, when the creation has one (a Pulumi resource's). */
  token?: string;
  /** As last seen. */
  instance?: Instance;
}

/** What the boots of one creation follow. */
export interface BootPolicy {
  targetState?: "running" | "stopped";
  onBootFailure?: "fail" | "replace";
  maxBootAttempts?: number;
}

export const BOOT_DEFAULTS = { targetState: "running", onBootFailure: "fail", maxBootAttempts: 3 } as const;

export interface BootPlan {
  policy: BootPolicy;
  /** The slots to fill. */
  indices: number[];
  /** The creation token of a slot (a Pulumi resource's, derived from its URN), if any. */
  tokenOf(index: number): string | undefined;
  /** The digest an instance rented for a slot carries (SPEC_ENV): what a left-behind instance must match to be taken over. */
  digestOf(index: number): string;
  /** How progress lines name a slot's instance (`instance 5`, `member 3: instance 5`). */
  who(held: Held): string;
  /**
   * Rents the slots at `pending`, away from `failedOffers`, into `into`. A rental that failed ends it with its error,
   * the rentals that succeeded already in `into` (so all are destroyed, or kept, together).
   */
  rent(pending: number[], failedOffers: number[], boot: number, into: Held[]): Promise<void>;
}

/**
 * The boots did not all succeed. `held`: the instances it still holds (interrupted: every one; otherwise those it
 * could not destroy again, with `cleanup` the failure of that). `error`: what ended it.
 */
export class BootFailure extends GpuRentalError {
  override name = "BootFailure";
  constructor(
    readonly error: Error,
    readonly held: Held[],
    readonly interrupted: boolean,
    readonly cleanup?: Error,
    /** Instances destroyed again. */
    readonly destroyed: number[] = [],
  ) {
    super(error.message);
  }
}

/**
 * Fills every slot of the plan with an instance in its target state, each instance booted or given up on by the
 * policy (rentsAgain). All or nothing: a BootFailure means nothing is left running but what it holds.
 */
export async function rentAndBoot(plan: BootPlan, op: Operation, rentOptions: RentOptions): Promise<Held[]> {
  const target = targetOf(plan.policy);
  const made: Held[] = [];
  const failedOffers: number[] = [];
  let booting: Held[] = [];
  try {
    if (plan.indices.some((index) => plan.tokenOf(index))) booting = await takeLeftBehind(plan, op, rentOptions);
    let pending = plan.indices.filter((index) => !booting.some((b) => b.index === index));
    for (let boot = 1; pending.length || booting.length; boot++) {
      if (pending.length) await plan.rent(pending, failedOffers, boot, booting);
      const outcomes = await waitAll(op, booting.map((b) => b.instanceId), target);
      booting.forEach((b, i) => (b.instance = outcomes[i].instance ?? b.instance));
      const interrupted = outcomes.find((o) => o.error instanceof InterruptedError);
      if (interrupted) throw interrupted.error;
      const failed = booting.flatMap((b, i) => (outcomes[i].error ? [{ ...b, error: outcomes[i].error! }] : []));
      made.push(...booting.filter((_, i) => !outcomes[i].error));
      booting = [];
      if (!failed.length) break;
      await destroyedAfterBoot(failed, op, rentOptions);
      const final = failed.find((f) => !rentsAgain(plan.policy, f.error, boot));
      if (final) throw new BootsFailed(failed.length, final);
      const attempts = plan.policy.maxBootAttempts ?? BOOT_DEFAULTS.maxBootAttempts;
      for (const f of failed) {
        op.log(`${plan.who(f)}${f.offer ? ` on offer ${f.offer.id}` : ""} failed to boot (${f.error.message}): destroyed, renting another (${boot + 1} of ${attempts})`);
      }
      failedOffers.push(...failed.flatMap((f) => (f.offer ? [f.offer.id] : [])));
      pending = failed.map((f) => f.index);
    }
  } catch (error) {
    if (error instanceof InterruptedError) throw new BootFailure(error, [...made, ...booting], true);
    const stuck = error instanceof Stuck ? error : undefined;
    const failure = await destroyedAgain(stuck?.error ?? (error as Error), [...made, ...booting], op, rentOptions);
    if (!stuck) throw failure;
    throw new BootFailure(stuck.error, [...stuck.left, ...failure.held], false, failure.cleanup ?? stuck.cleanup, failure.destroyed);
  }
  return made.sort((a, b) => a.index - b.index);
}

/** `count` instances did not boot (they were destroyed), and the policy rents `first` (at least) not again. */
export class BootsFailed extends GpuRentalError {
  override name = "BootsFailed";
  constructor(
    readonly count: number,
    readonly first: Held & { error: Error },
  ) {
    super(first.error.message);
  }
}

/**
 * Whether a rental whose boot ended in `error` (the instance destroyed already) is made again, after `rentals`
 * rentals: at most `maxBootAttempts` in all, for an instance that failed (exited, unknown, offline) with
 * `onBootFailure: replace`, and whatever the policy for one that did not come up within the boot deadline. The
 * live service has accepted one offer twice and left all but one of the instances never booting, with no error:
 * such an instance is the service's failure, not the image's.
 */
export function rentsAgain(policy: BootPolicy, error: unknown, rentals: number): boolean {
  if (rentals >= (policy.maxBootAttempts ?? BOOT_DEFAULTS.maxBootAttempts)) return false;
  if (error instanceof InstanceFailedError) return (policy.onBootFailure ?? BOOT_DEFAULTS.onBootFailure) === "replace";
  return error instanceof WaitTimeoutError && targetOf(policy) === "running";
}

/** The state the policy's instances are meant to be in. */
export function targetOf(policy: Pick<BootPolicy, "targetState">): WaitTarget {
  return policy.targetState ?? BOOT_DEFAULTS.targetState;
}

/** Whether the instance is in a state from which it never reaches `target`. */
export function failedFor(instance: Instance, target: WaitTarget): boolean {
  return target === "running" && !!instance.actual_status && FAILED_STATUSES.includes(instance.actual_status);
}

/** Waits for the instances together: one read a poll for one instance, one listing a poll for several. */
async function waitAll(op: Operation, ids: number[], target: WaitTarget): Promise<WaitOutcome[]> {
  const options = { clock: op.clock, ...op.wait, signal: op.signal };
  if (ids.length !== 1) return waitForInstances(op.client, ids, target, options);
  try {
    return [{ id: ids[0], instance: await waitForStatus(op.client, ids[0], target, options) }];
  } catch (error) {
    if (!(error instanceof GpuRentalError)) throw error;
    return [{ id: ids[0], instance: (error as { instance?: Instance }).instance, error }];
  }
}

/**
 * What an earlier, cut-off run of this creation left (instances carrying its slots' tokens, one listing): per slot,
 * the one rented for its spec and not failed is taken over; any other is destroyed.
 */
async function takeLeftBehind(plan: BootPlan, op: Operation, options: RentOptions): Promise<Held[]> {
  const slots = new Map(plan.indices.flatMap((index) => (plan.tokenOf(index) ? [[plan.tokenOf(index)!, index] as const] : [])));
  const found = await (op.leftBehind?.carrying([...slots.keys()]) ?? instancesCarrying(op.client, [...slots.keys()]));
  if (found.size) op.leftBehind?.forget();
  const taken: Held[] = [];
  const extra: number[] = [];
  for (const [token, left] of found) {
    const index = slots.get(token)!;
    for (const instance of left) {
      const fits = specOfInstance(instance) === plan.digestOf(index) && !failedFor(instance, targetOf(plan.policy));
      if (fits && !taken.some((t) => t.index === index)) taken.push({ index, instanceId: instance.id, offer: null, key: null, token, instance });
      else extra.push(instance.id);
    }
  }
  for (const t of taken) op.log(`${plan.who(t)}, rented for this resource by an earlier run that was cut off (token ${t.token}), is taken over`);
  if (extra.length) {
    op.log(`instance(s) ${extra.join(", ")}, left by an earlier run that was cut off, do not fit the program now (or are one too many): destroying them`);
    await destroyRetried(op.client, extra, options);
  }
  return taken;
}

/** Destroys instances that did not boot; those that cannot be destroyed end the creation, held (Stuck). */
async function destroyedAfterBoot(failed: (Held & { error: Error })[], op: Operation, options: RentOptions): Promise<void> {
  try {
    await destroyRetried(op.client, failed.map((f) => f.instanceId), options);
  } catch (cleanup) {
    const left = new Set(cleanup instanceof NotDestroyedError ? cleanup.left : failed.map((f) => f.instanceId));
    throw new Stuck(failed[0].error, failed.filter((f) => left.has(f.instanceId)), cleanup as Error);
  }
}

/** Instances that failed to boot and could not be destroyed: held, whatever else becomes of the creation. */
class Stuck extends GpuRentalError {
  constructor(
    readonly error: Error,
    readonly left: Held[],
    readonly cleanup: Error,
  ) {
    super(error.message);
  }
}

/**
 * All or nothing: the instances held (`held`) are destroyed again after `error`, retried while the service fails.
 * Those that still cannot be destroyed stay held in the BootFailure.
 */
async function destroyedAgain(error: Error, held: Held[], op: Operation, options: RentOptions): Promise<BootFailure> {
  const ids = held.map((h) => h.instanceId);
  try {
    await destroyRetried(op.client, ids, options);
  } catch (cleanup) {
    const left = new Set(cleanup instanceof NotDestroyedError ? cleanup.left : ids);
    return new BootFailure(error, held.filter((h) => left.has(h.instanceId)), false, cleanup as Error);
  }
  return new BootFailure(error, [], false, undefined, ids);
}

/** What an instance record says of itself, as Instance and GpuFleet members report it (nulls, never undefined). */
export interface ObservedOutputs {
  instanceId: number;
  status: string | null;
  sshHost: string | null;
  sshPort: number | null;
  machineId: number | null;
  gpuName: string | null;
  numGpus: number | null;
  pricePerHour: number | null;
  geolocation: string | null;
}

/** The one mapping of an instance record to outputs. */
export function observedOutputs(instance: Instance): ObservedOutputs {
  return {
    instanceId: instance.id,
    status: instance.actual_status ?? null,
    sshHost: instance.ssh_host ?? null,
    sshPort: instance.ssh_port ?? null,
    machineId: instance.machine_id ?? null,
    gpuName: instance.gpu_name ?? null,
    numGpus: instance.num_gpus ?? null,
    pricePerHour: instance.dph_total ?? null,
    geolocation: instance.geolocation ?? null,
  };
}

/** An instance known by its id only (rented, never seen). */
export function unseen(id: number): Instance {
  return { id } as Instance;
}

/**
 * The progress line of a rental held back by the service's rate limit (the calls of a rate-limited endpoint take
 * turns): said at once, then at most every few seconds, so a fleet of many members says it once, not once a member.
 */
export function limitProgress(op: Operation): (wait: LimitWait) => void {
  let said = -Infinity;
  return (wait) => {
    const now = op.clock.now();
    if (now - said < PROGRESS_EVERY_MS) return;
    said = now;
    op.log(describeWait(wait, now));
  };
}

const PROGRESS_EVERY_MS = 10_000;
