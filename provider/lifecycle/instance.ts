import type { GpuRentalClient } from "../client";
import { CreateInstanceRequest, FAILED_STATUSES, Instance, Offer } from "../schemas";
import { InstanceLeftError, rentInstance, RentOptions } from "../workflows/rent";
import { hasReached, InstanceFailedError, waitForStatus, WaitOptions } from "../workflows/wait";
import { GpuRentalError, NotFoundError } from "../errors";
import { InterruptedError } from "../workflows/interruption";
import { resourceToken, SPEC_ENV, specDigest, specOfInstance, sweepCommand } from "../workflows/tokens";
import { CreationContext, instancesCarrying, interruptedCreation, KEPT_IN_STATE, PARTIAL_OUTPUT, PartialCreationError } from "./creation";
import { destroyRetried } from "../workflows/destroy";
import { creationRequestOf, criteriaOf, DEFAULTS, lifetimeOf, diffInstanceSpec, InstanceSpec, knownSearch, rentsAgain, SpecDiff, SPEC_KEYS, targetOf } from "./instance-spec";
import type { DiffOptions } from "./managed";
import { checkInputs, CheckFailure, clientOf, definedOnly, requireSpec as requireValid, WithClient } from "./spec";
import { describePolicy } from "../workflows/watchdog";
import { stackSpendCap } from "../connection";
import { capWarnings } from "../workflows/spend";

export * from "./instance-spec";

/** What a created instance reports back (Pulumi outputs). Nulls, never undefined: gRPC cannot carry undefined. */
export interface InstanceOutputs {
  instanceId: number;
  status: string | null;
  sshHost: string | null;
  sshPort: number | null;
  /** The offer rented; null for an adopted instance, whose offer is not known. */
  rentedOfferId: number | null;
  /** The offer as it was when rented: what new criteria are checked against (null when adopted). */
  rentedOffer: Record<string, unknown> | null;
  machineId: number | null;
  gpuName: string | null;
  numGpus: number | null;
  pricePerHour: number | null;
  geolocation: string | null;
  instanceApiKey: string | null;
  /** The lifetime policy the watchdog on the instance was started with (it keeps it until the instance is replaced). */
  lifetimeInEffect: string | null;
}

export interface ResourceOptions extends WithClient, CreationContext {
  rent?: RentOptions;
  wait?: WaitOptions;
  /** Where progress lines go (every rental attempt, a boot that failed): the Pulumi provider shows them. */
  log?: (line: string) => void;
}

/** An instance this creation holds: rented now (its offer and key known), or taken over from a cut-off run. */
interface Held {
  instanceId: number;
  offer: Offer | null;
  instanceApiKey?: string;
  /** The creation token it carries. */
  token?: string;
}

/**
 * Creates the instance a spec declares and waits until it is in its target state. An instance that fails to
 * boot is destroyed before anything else happens: then another offer is rented (at most `maxBootAttempts`
 * rentals) with `onBootFailure: replace`, or when it did not come up within the boot deadline (see rentsAgain),
 * else the error is raised. Nothing is left half-created (or billed).
 *
 * With `identity` (a Pulumi resource), the instance carries the resource's token and its spec's digest: an
 * instance that an earlier, cut-off run of this creation rented is taken over when it was rented for this spec
 * and destroyed when not. Interrupted (`signal`) while an instance boots, or failing with an instance that cannot
 * be destroyed, the creation throws a PartialCreationError holding it, so the stack's state does.
 */
export async function createInstanceFromSpec(
  input: unknown,
  options: ResourceOptions = {},
): Promise<{ id: string; outs: InstanceSpec & InstanceOutputs }> {
  const spec = requireSpec(input);
  const client = clientOf(options);
  const log = options.log ?? (() => undefined);
  const token = options.identity && resourceToken(options.identity);
  const digest = instanceDigest(spec);
  const request = creationRequestOf(spec);
  if (token) request.env = { ...request.env, [SPEC_ENV]: digest };
  const rentOptions: RentOptions = { ...options.rent, token, signal: options.signal };
  const failedOffers: number[] = [];
  let next: Held | null = token ? await takeLeftBehind(client, token, digest, spec, rentOptions, log) : null;
  for (let boot = 1; ; boot++) {
    const held = next ?? (await rent(client, spec, request, failedOffers, rentOptions, log));
    next = null;
    try {
      const instance = await waitForStatus(client, held.instanceId, targetOf(spec), { ...options.wait, signal: options.signal });
      return { id: String(held.instanceId), outs: createdOutputs(spec, instance, held) };
    } catch (error) {
      const last = (error as { instance?: Instance }).instance;
      if (error instanceof InterruptedError) {
        throw new PartialCreationError(`Instance ${held.instanceId} was rented and the creation interrupted before it was ${targetOf(spec)}. ${KEPT_IN_STATE}`,
          String(held.instanceId), createdOutputs(spec, last ?? held.instanceId, held));
      }
      await destroyAfterFailure(client, held, error as Error, () => createdOutputs(spec, last ?? held.instanceId, held), rentOptions);
      if (!rentsAgain(spec, error, boot)) throw error;
      const attempts = spec.maxBootAttempts ?? DEFAULTS.maxBootAttempts;
      log(`instance ${held.instanceId}${held.offer ? ` on offer ${held.offer.id}` : ""} failed to boot (${(error as Error).message}): destroyed, renting another (${boot + 1} of ${attempts})`);
      if (held.offer) failedOffers.push(held.offer.id);
    }
  }
}

/** One rental for the spec, away from the offers that failed to boot; an interruption says what may exist. */
async function rent(
  client: GpuRentalClient, spec: InstanceSpec, request: CreateInstanceRequest, failedOffers: number[], options: RentOptions, log: (line: string) => void,
): Promise<Held> {
  const criteria = criteriaOf(spec);
  if (failedOffers.length) criteria.filters = { ...criteria.filters, id: { ...criteria.filters?.id, notin: failedOffers } };
  try {
    return await rentInstance(client, criteria, request, {
      requireInstanceKey: true,
      ...options,
      lifetime: lifetimeOf(spec),
      maxHourlySpend: options.maxHourlySpend ?? stackSpendCap(),
      onAttempt: (attempt) => {
        log(`offer ${attempt.offerId}: ${attempt.outcome}${attempt.detail ? ` (${attempt.detail})` : ""} after ${(attempt.atMs / 1000).toFixed(1)} s`);
        options.onAttempt?.(attempt);
      },
    });
  } catch (error) {
    if (error instanceof InstanceLeftError) {
      throw new PartialCreationError(`${error.message} ${KEPT_IN_STATE}`, String(error.instanceId), createdOutputs(spec, error.instanceId, { instanceId: error.instanceId, offer: null }));
    }
    throw error instanceof InterruptedError ? interruptedCreation(error, "The instance's creation") : error;
  }
}

/**
 * What an earlier, cut-off run of this creation left (instances carrying its token): the one rented for this very
 * spec, and not failed, is taken over; any other is destroyed.
 */
async function takeLeftBehind(
  client: GpuRentalClient, token: string, digest: string, spec: InstanceSpec, options: RentOptions, log: (line: string) => void,
): Promise<Held | null> {
  const left = (await instancesCarrying(client, [token])).get(token) ?? [];
  let taken: Held | null = null;
  for (const instance of left) {
    const fits = specOfInstance(instance) === digest && !failedFor(instance, targetOf(spec));
    if (fits && !taken) {
      log(`instance ${instance.id}, rented for this resource by an earlier run that was cut off (token ${token}), is taken over`);
      taken = { instanceId: instance.id, offer: null, token };
      continue;
    }
    log(`instance ${instance.id}, left by an earlier run that was cut off (token ${token}), ${fits ? "is one too many" : "does not fit the program now"}: destroying it`);
    await destroyRetried(client, [instance.id], options);
  }
  return taken;
}

/** The digest an instance rented for `spec` carries (SPEC_ENV): of every input but the secret one. */
export function instanceDigest(spec: InstanceSpec): string {
  const { imageLogin: _secret, ...rest } = spec;
  return specDigest(rest);
}

/** Whether the instance is in a state from which it never reaches `target`. */
export function failedFor(instance: Instance, target: "running" | "stopped"): boolean {
  return target === "running" && !!instance.actual_status && FAILED_STATUSES.includes(instance.actual_status);
}

/** The outputs of a created instance, as seen (or known by id only, when it was never seen). */
function createdOutputs(spec: InstanceSpec, instance: Instance | number, held: Held): InstanceSpec & InstanceOutputs {
  const lifetime = lifetimeOf(spec);
  return {
    ...spec, ...outputsOf(typeof instance === "number" ? unseen(instance) : instance, held.offer?.id ?? null),
    rentedOffer: held.offer, instanceApiKey: held.instanceApiKey ?? null, lifetimeInEffect: lifetime ? describePolicy(lifetime) : null,
  };
}

/** An instance known by its id only. */
function unseen(id: number): Instance {
  return { id } as Instance;
}

/**
 * What preview can say of the rental of inputs whose check passed: that the stack's maxHourlySpend will
 * refuse it. Nothing while an input that decides the search is not known yet.
 */
export async function instanceWarnings(news: Record<string, unknown>, unknown?: unknown, options: WithClient = {}): Promise<string[]> {
  const search = knownSearch(news, unknown);
  return search ? capWarnings(clientOf(options), criteriaOf(search), stackSpendCap()) : [];
}

/**
 * Destroys an instance that did not boot, again while the service fails (its failure budget); if that fails too,
 * a PartialCreationError holds it, so the stack's state does and nothing bills unseen.
 */
async function destroyAfterFailure(client: GpuRentalClient, held: Held, error: Error, outputs: () => object, options: RentOptions): Promise<void> {
  try {
    await destroyRetried(client, [held.instanceId], options);
  } catch (cleanup) {
    const token = held.token ? ` (outside Pulumi: \`${sweepCommand(held.token)}\`)` : "";
    throw new PartialCreationError(
      `${error.message} Then ${(cleanup as Error).message}. ${KEPT_IN_STATE}${token}`,
      String(held.instanceId), outputs(), [error.message, (cleanup as Error).message],
    );
  }
}

/** The current outputs of an instance, or null when it no longer exists (refresh then drops it from state). */
export async function readInstanceState(
  id: string,
  props: Readonly<Record<string, any>>,
  options: ResourceOptions = {},
): Promise<(Record<string, unknown> & InstanceOutputs) | null> {
  const client = clientOf(options);
  const instance = await client.instances.get(Number(id));
  if (!instance) return null;
  return {
    ...props,
    ...observedSpec(instance),
    ...outputsOf(instance, rentedOfferOf(props)),
    ...keptOutputs(props),
  };
}

/** What only the creation knew, carried over from the state: the instance key, the offer as rented, its watchdog. */
function keptOutputs(props: Readonly<Record<string, any>>): Pick<InstanceOutputs, "instanceApiKey" | "rentedOffer" | "lifetimeInEffect"> {
  return { instanceApiKey: props.instanceApiKey ?? null, rentedOffer: props.rentedOffer ?? null, lifetimeInEffect: props.lifetimeInEffect ?? null };
}

/**
 * The provider's diff: the specs (diffInstanceSpec), and, for an instance whose creation did not finish (its
 * state is a partial creation's), the instance as the service shows it: failed or gone, it is replaced, as a
 * failed boot is; still booting, the update waits for it.
 */
export function diffInstance(
  olds: Readonly<Record<string, any>>, news: Readonly<Record<string, any>>, unknown?: unknown, options?: DiffOptions,
): SpecDiff | Promise<SpecDiff> {
  const diff = diffInstanceSpec(olds, news, unknown);
  const target = targetOf(olds);
  if (diff.replaces.length || !options || !olds[PARTIAL_OUTPUT] || typeof olds.instanceId !== "number") return diff;
  const waits: SpecDiff = { ...diff, changes: true, updates: [...diff.updates, "status"] };
  return options.client().instances.get(olds.instanceId).then(
    (instance) => {
      if (instance && !failedFor(instance, target)) return waits;
      const pinned = news.offerId !== undefined && news.offerId !== null && news.offerId === olds.offerId;
      return { ...diff, changes: true, replaces: ["status"], deleteBeforeReplace: pinned };
    },
    // The service does not answer: the update looks again, and waits.
    () => waits,
  );
}

/** Applies the in-place changes (label, target state) and returns the new outputs. */
export async function updateInstanceFromSpec(
  id: string,
  olds: Readonly<Record<string, any>>,
  input: unknown,
  options: ResourceOptions = {},
): Promise<Record<string, unknown>> {
  const spec = requireSpec(input);
  const diff = diffInstanceSpec(olds, spec as Record<string, unknown>);
  if (diff.replaces.length) {
    throw new GpuRentalError(`Instance ${id}: ${diff.replaces.join(", ")} cannot change in place (the engine should replace it).`);
  }
  const client = clientOf(options);
  const lifetime = lifetimeOf(spec);
  const declared = lifetime ? describePolicy(lifetime) : null;
  if (declared !== (olds.lifetimeInEffect ?? null)) {
    options.log?.(`instance ${id}: its watchdog keeps the lifetime it was started with (${olds.lifetimeInEffect ?? "none"}); ` +
      `the new one (${declared ?? "none"}) applies to the next instance rented for this resource. Replace it to apply it now (pulumi up --replace).`);
  }
  const change: { label?: string; state?: "running" | "stopped" } = {};
  if (diff.updates.includes("label")) change.label = spec.label ?? DEFAULTS.label;
  if (diff.updates.includes("targetState")) change.state = spec.targetState ?? DEFAULTS.targetState;
  if (change.label !== undefined || change.state !== undefined) await client.instances.update(Number(id), change);
  const target = targetOf(spec);
  // Built from the new spec, not the old state: an input the program dropped must not linger in the outputs.
  const outputs = (instance: Instance) => ({
    ...spec, label: spec.label ?? DEFAULTS.label, targetState: target, ...outputsOf(instance, rentedOfferOf(olds)), ...keptOutputs(olds),
  });
  const current = await client.instances.get(Number(id));
  if (!current) throw new GpuRentalError(`Instance ${id} no longer exists; run \`pulumi refresh\` to drop it from the stack.`);
  // A creation cut off while the instance booted left it in the state before its target: the wait goes on here.
  if (!change.state && hasReached(current, target)) return outputs(current);
  try {
    return outputs(await waitForStatus(client, Number(id), target, { ...options.wait, signal: options.signal }));
  } catch (error) {
    const last = (error as { instance?: Instance }).instance ?? current;
    if (error instanceof InterruptedError) {
      throw new PartialCreationError(`Interrupted before instance ${id} was ${target}. ${KEPT_IN_STATE}`, id, outputs(last));
    }
    if (error instanceof InstanceFailedError) throw new PartialCreationError(`${error.message} ${KEPT_IN_STATE}`, id, outputs(last));
    throw error;
  }
}

/**
 * Takes an existing instance of the account under management (`adoptId`): it must exist and run the declared
 * image; its label and target state are then set as declared. Its offer and its instance key are not known.
 */
export async function adoptInstance(id: string, input: unknown, options: ResourceOptions = {}): Promise<{ id: string; outs: Record<string, unknown> }> {
  const spec = requireSpec(input);
  const instance = await clientOf(options).instances.get(Number(id));
  if (!instance) {
    throw new NotFoundError(`Instance ${id} cannot be adopted: the account has no instance ${id}. Check adoptId, and the account the resource uses.`);
  }
  if (spec.image !== undefined && instance.image_uuid && withTag(spec.image) !== withTag(instance.image_uuid)) {
    throw new GpuRentalError(
      `Instance ${id} cannot be adopted as declared: it runs ${instance.image_uuid}, the program declares image ${spec.image}. ` +
        "Declare the image it runs (changing it later replaces the instance).",
    );
  }
  const olds = { ...spec, ...observedSpec(instance), rentedOfferId: null, rentedOffer: null, instanceApiKey: null, lifetimeInEffect: null };
  return { id, outs: await updateInstanceFromSpec(id, olds, spec, options) };
}

/**
 * An existing instance as `pulumi import` takes it: the inputs that declare it as it is (its image, label, state
 * and disk; defaults left out), and its outputs. Its offer and its instance key are not known. Null when it does
 * not exist.
 */
export async function importInstance(id: string, options: ResourceOptions = {}): Promise<{ inputs: Record<string, unknown>; outs: Record<string, unknown> } | null> {
  const instance = await clientOf(options).instances.get(Number(id));
  if (!instance) return null;
  const observed = observedSpec(instance);
  const inputs = definedOnly({
    image: instance.image_uuid ?? undefined,
    templateHashId: instance.image_uuid ? undefined : (instance.template_hash_id ?? undefined),
    label: observed.label || undefined,
    targetState: observed.targetState === DEFAULTS.targetState ? undefined : observed.targetState,
    disk: instance.disk_space === null || instance.disk_space === undefined || instance.disk_space === DEFAULTS.disk ? undefined : instance.disk_space,
  });
  return { inputs, outs: { ...inputs, ...outputsOf(instance, null), rentedOffer: null, instanceApiKey: null } };
}

/** The inputs that can be read back from an instance record: what a refresh or an adoption compares. */
function observedSpec(instance: Instance): Record<string, unknown> {
  const observed: Record<string, unknown> = { label: instance.label ?? "" };
  if (instance.cur_state === "stopped" || instance.cur_state === "running") observed.targetState = instance.cur_state;
  return observed;
}

function rentedOfferOf(props: Readonly<Record<string, any>>): number | null {
  return typeof props.rentedOfferId === "number" && props.rentedOfferId >= 0 ? props.rentedOfferId : null;
}

/** An image name with its tag written out (`latest` when none is given), for comparison. */
function withTag(image: string): string {
  return /:[^/]+$/.test(image) ? image : `${image}:latest`;
}

/** Destroys the instance; one already gone counts as destroyed. */
export async function destroyInstanceById(id: string, options: ResourceOptions = {}): Promise<void> {
  const client = clientOf(options);
  if (await client.instances.get(Number(id))) await client.instances.destroy(Number(id));
}

function outputsOf(instance: Instance, rentedOfferId: number | null): Omit<InstanceOutputs, "instanceApiKey" | "rentedOffer" | "lifetimeInEffect"> {
  return {
    instanceId: instance.id,
    status: instance.actual_status ?? null,
    sshHost: instance.ssh_host ?? null,
    sshPort: instance.ssh_port ?? null,
    rentedOfferId,
    machineId: instance.machine_id ?? null,
    gpuName: instance.gpu_name ?? null,
    numGpus: instance.num_gpus ?? null,
    pricePerHour: instance.dph_total ?? null,
    geolocation: instance.geolocation ?? null,
  };
}

function requireSpec(input: unknown): InstanceSpec {
  return requireValid("Instance", InstanceSpec, input);
}

/**
 * The provider's `check`: validates known inputs and names each bad one. Inputs still unknown (preview) are
 * checked when they are known.
 */
export function checkInstanceInputs(
  news: Record<string, unknown>,
  unknown?: unknown,
): { inputs: Record<string, unknown>; failures: CheckFailure[] } {
  return checkInputs(InstanceSpec, SPEC_KEYS, news, unknown);
}
