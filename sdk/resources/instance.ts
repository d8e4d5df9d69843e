import { Instance } from "../schemas";
import { rentInstance, RentOptions } from "../workflows/rent";
import { waitForStatus, WaitOptions } from "../workflows/wait";
import { GpuRentalError, NotFoundError } from "../errors";
import { creationRequestOf, criteriaOf, DEFAULTS, lifetimeOf, diffInstanceSpec, InstanceSpec, knownSearch, rentsAgain, SPEC_KEYS } from "./instance-spec";
import { checkInputs, CheckFailure, clientOf, definedOnly, knownValues, requireSpec as requireValid, WithClient } from "./spec";
import { describePolicy, LIFETIME_KEYS, LifetimePolicy, lifetimeWarnings, watchdogCannotRun } from "../workflows/watchdog";
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

export interface ResourceOptions extends WithClient {
  rent?: RentOptions;
  wait?: WaitOptions;
  /** Where progress lines go (every rental attempt, a boot that failed): the Pulumi provider shows them. */
  log?: (line: string) => void;
}

/**
 * Creates the instance a spec declares and waits until it is in its target state. An instance that fails to
 * boot is destroyed before anything else happens: then another offer is rented (at most `maxBootAttempts`
 * rentals) with `onBootFailure: replace`, or when it did not come up within the boot deadline (see rentsAgain),
 * else the error is raised. Nothing is left half-created (or billed).
 */
export async function createInstanceFromSpec(
  input: unknown,
  options: ResourceOptions = {},
): Promise<{ id: string; outs: InstanceSpec & InstanceOutputs }> {
  const spec = requireSpec(input);
  const client = clientOf(options);
  const log = options.log ?? (() => undefined);
  const failedOffers: number[] = [];
  // A policy is reported in effect only where a watchdog can run (not on an emulator without machines).
  const unenforced = lifetimeOf(spec) && (await watchdogCannotRun(client));
  if (unenforced) log(`its lifetime policy (${describePolicy(lifetimeOf(spec)!)}) is not in effect: ${unenforced}`);
  for (let boot = 1; ; boot++) {
    const criteria = criteriaOf(spec);
    if (failedOffers.length) criteria.filters = { ...criteria.filters, id: { ...criteria.filters?.id, notin: failedOffers } };
    const rented = await rentInstance(client, criteria, creationRequestOf(spec), {
      requireInstanceKey: true,
      ...options.rent,
      lifetime: lifetimeOf(spec),
      maxHourlySpend: options.rent?.maxHourlySpend ?? stackSpendCap(),
      onAttempt: (attempt) => {
        log(`offer ${attempt.offerId}: ${attempt.outcome}${attempt.detail ? ` (${attempt.detail})` : ""} after ${(attempt.atMs / 1000).toFixed(1)} s`);
        options.rent?.onAttempt?.(attempt);
      },
    });
    try {
      const instance = await waitForStatus(client, rented.instanceId, spec.targetState ?? DEFAULTS.targetState, options.wait);
      const lifetime = lifetimeOf(spec);
      const outs = {
        ...spec, ...outputsOf(instance, rented.offer.id), rentedOffer: rented.offer, instanceApiKey: rented.instanceApiKey ?? null,
        lifetimeInEffect: lifetime && !unenforced ? describePolicy(lifetime) : null,
      };
      return { id: String(rented.instanceId), outs };
    } catch (error) {
      await destroyAfterFailure(client, rented.instanceId, error as Error);
      if (!rentsAgain(spec, error, boot)) throw error;
      const attempts = spec.maxBootAttempts ?? DEFAULTS.maxBootAttempts;
      log(`instance ${rented.instanceId} on offer ${rented.offer.id} failed to boot (${(error as Error).message}): destroyed, renting another (${boot + 1} of ${attempts})`);
      failedOffers.push(rented.offer.id);
    }
  }
}

/**
 * What `pulumi preview` can say of the rental of inputs whose check passed: that the stack's maxHourlySpend will
 * refuse it (nothing while an input that decides the search is not known yet); that its lifetime policy will not
 * be enforced (an emulator without machines).
 */
export async function instanceWarnings(news: Record<string, unknown>, unknown?: unknown, options: WithClient = {}): Promise<string[]> {
  const search = knownSearch(news, unknown);
  const client = clientOf(options);
  const lifetime = await lifetimeWarnings(client, knownValues(news, LIFETIME_KEYS, unknown) as LifetimePolicy | undefined);
  return [...lifetime, ...(search ? await capWarnings(client, criteriaOf(search), stackSpendCap()) : [])];
}

/** Destroys an instance that did not boot; if that fails too, the error says which instance is left running. */
async function destroyAfterFailure(client: ReturnType<typeof clientOf>, id: number, error: Error): Promise<void> {
  try {
    await client.instances.destroy(id);
  } catch (cleanup) {
    // Say so: an instance nobody knows of would go on costing money.
    throw new GpuRentalError(
      `${error.message} Destroying instance ${id} failed too (${(cleanup as Error).message}): destroy it by hand (DELETE /api/v0/instances/{id}/).`,
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
  const instance = change.state
    ? await waitForStatus(client, Number(id), change.state, options.wait)
    : await client.instances.get(Number(id));
  if (!instance) throw new GpuRentalError(`Instance ${id} no longer exists; run \`pulumi refresh\` to drop it from the stack.`);
  // Built from the new spec, not the old state: an input the program dropped must not linger in the outputs.
  return {
    ...spec,
    label: spec.label ?? DEFAULTS.label,
    targetState: spec.targetState ?? DEFAULTS.targetState,
    ...outputsOf(instance, rentedOfferOf(olds)),
    ...keptOutputs(olds),
  };
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
    status: instance.actual_status,
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
