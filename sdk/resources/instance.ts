import { z } from "zod";
import { FieldFilter, Instance, OfferType, Order, Runtype, TargetState, CreateInstanceRequest } from "../schemas";
import { DEFAULT_ORDER, OfferCriteria, rentInstance, RentOptions } from "../workflows/rent";
import { waitForStatus, WaitOptions } from "../workflows/wait";
import { GpuRentalError, NotFoundError } from "../errors";
import { checkInputs, checkSpec, CheckFailure, clientOf, requireSpec as requireValid, sameValue, WithClient, withDefault as defaultOf } from "./spec";

/**
 * The desired state of one rented instance, as the Pulumi `Instance` resource declares it. The search criteria
 * (or `offerId`) are the resource's identity: which offer happened to be rented is an output, so a changed market
 * or a refresh never replaces a running instance.
 */
export const InstanceSpec = z
  .object({
    offerId: z.number().int().optional(),
    /** Criteria sugar: `filters.gpu_name = {eq: gpuModel}`. */
    gpuModel: z.string().min(1).optional(),
    /** Criteria sugar: `filters.num_gpus = {eq: gpuCount}`. */
    gpuCount: z.number().int().positive().optional(),
    filters: z.record(z.string(), FieldFilter).optional(),
    order: Order.optional(),
    /** `reserved` is left out: the API shows no way to accept an offer at its reserved price. */
    offerType: z.enum(["on-demand", "ondemand", "bid"]).optional(),
    maxPricePerHour: z.number().positive().optional(),
    image: z.string().min(1).optional(),
    /** A template's `hash_id`: the template's values are the base of the instance; its own inputs win. */
    templateHashId: z.string().min(1).optional(),
    label: z.string().optional(),
    disk: z.number().positive().optional(),
    env: z.record(z.string(), z.string()).optional(),
    onstart: z.string().optional(),
    runtype: Runtype.optional(),
    targetState: TargetState.optional(),
    /**
     * A network volume mounted at `mountPath`: an existing one of yours (`volumeId`, e.g. a NetworkVolume
     * resource's output), or a new one of `size` GB made from a volume offer (`offerId`) with the instance.
     */
    volume: z
      .object({
        volumeId: z.number().int().optional(),
        offerId: z.number().int().optional(),
        size: z.number().positive().optional(),
        mountPath: z.string().min(1),
      })
      .strict()
      .refine((v) => (v.volumeId === undefined) !== (v.offerId === undefined), { message: "give volumeId or offerId, not both" })
      .refine((v) => v.offerId === undefined || v.size !== undefined, { message: "a new volume (offerId) needs its size" })
      .optional(),
  })
  .refine((s) => s.offerId === undefined || (!s.gpuModel && !s.gpuCount && !s.filters && !s.order), {
    message: "give either offerId or search criteria (gpuModel, gpuCount, filters, order), not both",
    path: ["offerId"],
  })
  .refine((s) => s.image !== undefined || s.templateHashId !== undefined, {
    message: "give image, or templateHashId (a template's hash_id), or both",
    path: ["image"],
  });
export type InstanceSpec = z.infer<typeof InstanceSpec>;

/** What a created instance reports back (Pulumi outputs). Nulls, never undefined: gRPC cannot carry undefined. */
export interface InstanceOutputs {
  instanceId: number;
  status: string | null;
  sshHost: string | null;
  sshPort: number | null;
  /** The offer rented; null for an adopted instance, whose offer is not known. */
  rentedOfferId: number | null;
  machineId: number | null;
  gpuName: string | null;
  numGpus: number | null;
  pricePerHour: number | null;
  geolocation: string | null;
  instanceApiKey: string | null;
}

/** Inputs changed in place by `PUT /api/v0/instances/{id}/`; every other input needs a new instance. */
export const UPDATABLE_INPUTS = ["label", "targetState"] as const;
const SPEC_KEYS = ["offerId", "gpuModel", "gpuCount", "filters", "order", "offerType", "maxPricePerHour", "image",
  "templateHashId", "label", "disk", "env", "onstart", "runtype", "targetState", "volume"] as const;
type SpecKey = (typeof SPEC_KEYS)[number];

/** Defaults applied before comparing, so writing a default explicitly is not a change. */
const DEFAULTS = {
  disk: 8,
  runtype: "ssh_direct" as Runtype,
  targetState: "running" as TargetState,
  label: "",
  env: {},
  offerType: "on-demand",
  order: DEFAULT_ORDER,
} satisfies Partial<Record<SpecKey, unknown>>;

export interface SpecDiff {
  changes: boolean;
  replaces: string[];
  updates: string[];
  /** A pinned offer can be rented only once: the old instance must give it back before the new one takes it. */
  deleteBeforeReplace: boolean;
}

/**
 * Compares the declared spec of an existing instance with a new one. `unknown` marks a value not known yet
 * (during preview): it counts as a change.
 */
export function diffInstanceSpec(olds: Readonly<Record<string, any>>, news: Readonly<Record<string, any>>, unknown?: unknown): SpecDiff {
  const isUnknown = (key: SpecKey) => unknown !== undefined && news[key] === unknown;
  // Criteria written differently but meaning the same search (`ondemand` for `on-demand`, `gpuModel` for a
  // `gpu_name` filter) are not a change: the criteria are compared as the search they stand for.
  const sameSearch = !CRITERIA_KEYS.some(isUnknown) && sameValue(searchOf(olds), searchOf(news));
  const changed = SPEC_KEYS.filter((key) => {
    if (isUnknown(key)) return true;
    if (sameSearch && (CRITERIA_KEYS as readonly string[]).includes(key)) return false;
    return !sameValue(withDefault(key, olds[key]), withDefault(key, news[key]));
  });
  const updates = changed.filter((key) => (UPDATABLE_INPUTS as readonly string[]).includes(key));
  const replaces = changed.filter((key) => !updates.includes(key));
  const pinned = news.offerId !== undefined && news.offerId !== null && news.offerId === olds.offerId;
  return { changes: changed.length > 0, replaces, updates, deleteBeforeReplace: pinned && replaces.length > 0 };
}

/** Validates a spec; the messages name the input and the problem. */
export function checkInstanceSpec(spec: unknown): { spec?: InstanceSpec; failures: CheckFailure[] } {
  return checkSpec(InstanceSpec, spec);
}

/** The inputs that say which offer to rent. */
const CRITERIA_KEYS = ["offerId", "gpuModel", "gpuCount", "filters", "order", "offerType", "maxPricePerHour"] as const;

export function criteriaOf(spec: InstanceSpec): OfferCriteria {
  return {
    offerId: spec.offerId,
    filters: spec.offerId !== undefined ? undefined : filtersOf(spec),
    order: spec.order,
    type: spec.offerType,
    maxPricePerHour: spec.maxPricePerHour,
  };
}

/** The offer-search filters a spec stands for: its filters, with the gpuModel/gpuCount sugar folded in. */
function filtersOf(spec: Pick<InstanceSpec, "filters" | "gpuModel" | "gpuCount" | "runtype">): Record<string, FieldFilter> {
  const filters: Record<string, FieldFilter> = { ...spec.filters };
  if (spec.gpuModel) filters.gpu_name = { ...filters.gpu_name, eq: spec.gpuModel };
  if (spec.gpuCount) filters.num_gpus = { ...filters.num_gpus, eq: spec.gpuCount };
  // Direct SSH or Jupyter needs at least one directly reachable port on the machine.
  if ((spec.runtype ?? DEFAULTS.runtype).endsWith("_direct")) filters.direct_port_count = { gte: 1, ...filters.direct_port_count };
  return filters;
}

/** The search a (stored or new) spec stands for, in one spelling, for comparison. */
function searchOf(spec: Readonly<Record<string, any>>): unknown {
  if (spec.offerId !== undefined && spec.offerId !== null) return { offerId: spec.offerId };
  const type = withDefault("offerType", spec.offerType);
  return { filters: filtersOf(spec), order: withDefault("order", spec.order), type, maxPricePerHour: spec.maxPricePerHour ?? null };
}

export function creationRequestOf(spec: InstanceSpec): CreateInstanceRequest {
  // With a template, what the program leaves out comes from the template, not from our defaults.
  const fallback: Partial<typeof DEFAULTS> = spec.templateHashId === undefined ? DEFAULTS : {};
  return {
    image: spec.image,
    template_hash_id: spec.templateHashId,
    label: spec.label,
    disk: spec.disk ?? fallback.disk,
    runtype: spec.runtype ?? fallback.runtype,
    target_state: spec.targetState ?? DEFAULTS.targetState,
    env: spec.env,
    onstart: spec.onstart,
    volume_info: volumeInfoOf(spec.volume),
  };
}

/** The `volume_info` of a creation request: link an existing volume, or create one from a volume offer. */
function volumeInfoOf(volume: InstanceSpec["volume"]): CreateInstanceRequest["volume_info"] {
  if (!volume) return undefined;
  const created = volume.offerId !== undefined;
  return {
    create_new: created,
    volume_id: created ? volume.offerId! : volume.volumeId!,
    ...(created && { size: volume.size }),
    mount_path: volume.mountPath,
  };
}

export interface ResourceOptions extends WithClient {
  rent?: RentOptions;
  wait?: WaitOptions;
}

/**
 * Creates the instance a spec declares and waits until it is in its target state. If it never gets there, the
 * instance is destroyed again before the error is raised: nothing is left half-created (or billed).
 */
export async function createInstanceFromSpec(
  input: unknown,
  options: ResourceOptions = {},
): Promise<{ id: string; outs: InstanceSpec & InstanceOutputs }> {
  const spec = requireSpec(input);
  const client = clientOf(options);
  const rented = await rentInstance(client, criteriaOf(spec), creationRequestOf(spec), options.rent);
  let instance: Instance;
  try {
    instance = await waitForStatus(client, rented.instanceId, spec.targetState ?? DEFAULTS.targetState, options.wait);
  } catch (error) {
    try {
      await client.destroyInstance(rented.instanceId);
    } catch (cleanup) {
      // Say so: an instance nobody knows of would go on costing money.
      throw new GpuRentalError(
        `${(error as Error).message} Destroying instance ${rented.instanceId} failed too (${(cleanup as Error).message}): ` +
          "destroy it by hand (DELETE /api/v0/instances/{id}/).",
      );
    }
    throw error;
  }
  const outs = { ...spec, ...outputsOf(instance, rented.offer.id), instanceApiKey: rented.instanceApiKey ?? null };
  return { id: String(rented.instanceId), outs };
}

/** The current outputs of an instance, or null when it no longer exists (refresh then drops it from state). */
export async function readInstanceState(
  id: string,
  props: Readonly<Record<string, any>>,
  options: ResourceOptions = {},
): Promise<(Record<string, unknown> & InstanceOutputs) | null> {
  const client = clientOf(options);
  const instance = await client.getInstance(Number(id));
  if (!instance) return null;
  return {
    ...props,
    ...observedSpec(instance),
    ...outputsOf(instance, rentedOfferOf(props)),
    instanceApiKey: (props.instanceApiKey as string | null | undefined) ?? null,
  };
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
  const change: { label?: string; state?: "running" | "stopped" } = {};
  if (diff.updates.includes("label")) change.label = spec.label ?? DEFAULTS.label;
  if (diff.updates.includes("targetState")) change.state = spec.targetState ?? DEFAULTS.targetState;
  if (change.label !== undefined || change.state !== undefined) await client.updateInstance(Number(id), change);
  const instance = change.state
    ? await waitForStatus(client, Number(id), change.state, options.wait)
    : await client.getInstance(Number(id));
  if (!instance) throw new GpuRentalError(`Instance ${id} no longer exists; run \`pulumi refresh\` to drop it from the stack.`);
  // Built from the new spec, not the old state: an input the program dropped must not linger in the outputs.
  return {
    ...spec,
    label: spec.label ?? DEFAULTS.label,
    targetState: spec.targetState ?? DEFAULTS.targetState,
    ...outputsOf(instance, rentedOfferOf(olds)),
    instanceApiKey: (olds.instanceApiKey as string) ?? null,
  };
}

/**
 * Takes an existing instance of the account under management (`adoptId`): it must exist and run the declared
 * image; its label and target state are then set as declared. Its offer and its instance key are not known.
 */
export async function adoptInstance(id: string, input: unknown, options: ResourceOptions = {}): Promise<{ id: string; outs: Record<string, unknown> }> {
  const spec = requireSpec(input);
  const instance = await clientOf(options).getInstance(Number(id));
  if (!instance) {
    throw new NotFoundError(`Instance ${id} cannot be adopted: the account has no instance ${id}. Check adoptId, and the account the resource uses.`);
  }
  if (spec.image !== undefined && instance.image_uuid && withTag(spec.image) !== withTag(instance.image_uuid)) {
    throw new GpuRentalError(
      `Instance ${id} cannot be adopted as declared: it runs ${instance.image_uuid}, the program declares image ${spec.image}. ` +
        "Declare the image it runs (changing it later replaces the instance).",
    );
  }
  const olds = { ...spec, ...observedSpec(instance), rentedOfferId: null, instanceApiKey: null };
  return { id, outs: await updateInstanceFromSpec(id, olds, spec, options) };
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
  if (await client.getInstance(Number(id))) await client.destroyInstance(Number(id));
}

function outputsOf(instance: Instance, rentedOfferId: number | null): Omit<InstanceOutputs, "instanceApiKey"> {
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

function withDefault(key: SpecKey, value: unknown): unknown {
  if (key === "offerType" && value === "ondemand") return "on-demand";
  return defaultOf<SpecKey>(DEFAULTS, key, value);
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
