import { z } from "zod";
import { offerMatches } from "../filter-predicate";
import type { OfferFilters } from "../offer-filters";
import { CreateInstanceRequest, FieldFilter, Order, Runtype, TargetState } from "../schemas";
import { DEFAULT_ORDER, OfferCriteria } from "../workflows/rent";
import { InstanceFailedError, WaitTimeoutError } from "../workflows/wait";
import { LIFETIME_KEYS, LifetimeFields, LifetimePolicy, lifetimeProblem } from "../workflows/watchdog";
import { knownValues, sameValue, withDefault as defaultOf } from "./spec";

/**
 * The desired state of one rented instance, as the Pulumi `Instance` resource declares it, and how two of them
 * compare. The search criteria are placement rules, not identity: the offer rented is an output, and new criteria
 * that the rented machine still satisfies change nothing on the service.
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
    /** The bid for an interruptible offer, $/hour; default the price limit, else the offer's minimum bid. */
    price: z.number().positive().optional(),
    argsStr: z.string().optional(),
    useJupyterLab: z.boolean().optional(),
    jupyterDir: z.string().optional(),
    pythonUtf8: z.boolean().optional(),
    langUtf8: z.boolean().optional(),
    /** Registry login as command-line flags, `-u <user> -p <token> <registry>`: kept secret. */
    imageLogin: z.string().optional(),
    cancelUnavail: z.boolean().optional(),
    vm: z.boolean().optional(),
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
    /** When the instance fails to boot (exited, unknown, offline): `fail` (default), or `replace` it with another rental. */
    onBootFailure: z.enum(["fail", "replace"]).optional(),
    /** Rentals tried in all with `onBootFailure: replace`. Default 3. */
    maxBootAttempts: z.number().int().min(1).max(10).optional(),
    /** The instance ends itself (sdk/workflows/watchdog.ts): maxLifetime, onLifetimeEnd, idleTimeout, idleAction, idleThreshold. */
    ...LifetimeFields,
  })
  .refine((s) => s.offerId === undefined || (!s.gpuModel && !s.gpuCount && !s.filters && !s.order), {
    message: "give either offerId or search criteria (gpuModel, gpuCount, filters, order), not both",
    path: ["offerId"],
  })
  .superRefine((s, ctx) => {
    // With a template and no runtype, the template's runtype is known at creation only (checked there).
    const runtype = s.runtype ?? (s.templateHashId === undefined ? DEFAULTS.runtype : undefined);
    const problem = lifetimeProblem(s, runtype);
    if (problem) ctx.addIssue({ code: "custom", message: problem, path: [s.runtype === "args" ? "runtype" : s.idleTimeout !== undefined && s.maxLifetime === undefined ? "idleTimeout" : "maxLifetime"] });
  })
  .refine((s) => s.image !== undefined || s.templateHashId !== undefined, {
    message: "give image, or templateHashId (a template's hash_id), or both",
    path: ["image"],
  });
export type InstanceSpec = z.infer<typeof InstanceSpec>;

export const SPEC_KEYS = ["offerId", "gpuModel", "gpuCount", "filters", "order", "offerType", "maxPricePerHour", "image",
  "templateHashId", "label", "disk", "env", "onstart", "runtype", "targetState", "price", "argsStr", "useJupyterLab",
  "jupyterDir", "pythonUtf8", "langUtf8", "imageLogin", "cancelUnavail", "vm", "volume", "onBootFailure", "maxBootAttempts", ...LIFETIME_KEYS] as const;
type SpecKey = (typeof SPEC_KEYS)[number];

/** Inputs changed in place by `PUT /api/v0/instances/{id}/`. */
export const UPDATABLE_INPUTS = ["label", "targetState"] as const;
/** Inputs that say which offer to rent: placement rules, recorded in place while the rented machine satisfies them. */
const CRITERIA_KEYS = ["offerId", "gpuModel", "gpuCount", "filters", "order", "offerType", "maxPricePerHour"] as const;
/** Inputs that decide the offer search (the criteria, and the runtype, which may ask for a direct port). */
export const SEARCH_KEYS = [...CRITERIA_KEYS, "runtype"] as const;
export type InstanceSearch = Pick<InstanceSpec, (typeof SEARCH_KEYS)[number]>;
/**
 * Inputs that only steer the creation: recorded in place, nothing sent. The lifetime policy is among them: the
 * watchdog on a running instance keeps the policy it was started with (`lifetimeInEffect`); a new one applies to
 * the next instance rented (a replacement), so changing it never replaces a running instance.
 */
const POLICY_KEYS = ["onBootFailure", "maxBootAttempts", ...LIFETIME_KEYS] as const;

/**
 * Whether a rental whose boot ended in `error` (the instance destroyed already) is made again, after `rentals`
 * rentals: at most `maxBootAttempts` in all, for an instance that failed (exited, unknown, offline) with
 * `onBootFailure: replace`, and whatever the policy for one that did not come up within the boot deadline. The
 * live service has accepted one offer twice and left all but one of the instances never booting, with no error:
 * such an instance is the service's failure, not the image's.
 */
export function rentsAgain(spec: Pick<InstanceSpec, "onBootFailure" | "maxBootAttempts" | "targetState">, error: unknown, rentals: number): boolean {
  if (rentals >= (spec.maxBootAttempts ?? DEFAULTS.maxBootAttempts)) return false;
  if (error instanceof InstanceFailedError) return (spec.onBootFailure ?? DEFAULTS.onBootFailure) === "replace";
  return error instanceof WaitTimeoutError && (spec.targetState ?? DEFAULTS.targetState) === "running";
}

/** Defaults applied before comparing, so writing a default explicitly is not a change. */
export const DEFAULTS = {
  disk: 8,
  runtype: "ssh_direct" as Runtype,
  targetState: "running" as TargetState,
  label: "",
  env: {},
  offerType: "on-demand",
  order: DEFAULT_ORDER,
  onBootFailure: "fail",
  maxBootAttempts: 3,
  // The watchdog's own defaults (sdk/workflows/watchdog.ts): a generated SDK that fills them in changes nothing.
  onLifetimeEnd: "destroy",
  idleAction: "stop",
  idleThreshold: 10,
} satisfies Partial<Record<SpecKey, unknown>>;

export interface SpecDiff {
  changes: boolean;
  replaces: string[];
  /** Changed in place: sent to the service (label, target state) or only recorded (criteria still met, policies). */
  updates: string[];
  /** A pinned offer can be rented only once: the old instance must give it back before the new one takes it. */
  deleteBeforeReplace: boolean;
}

/**
 * Compares the declared spec of an existing instance (its state: inputs and outputs) with a new one. `unknown`
 * marks a value not known yet (during preview): it counts as a change. Only what the API cannot change in place
 * replaces the instance: not label or target state, not a policy, and not new criteria that the offer rented
 * still satisfies.
 */
export function diffInstanceSpec(olds: Readonly<Record<string, any>>, news: Readonly<Record<string, any>>, unknown?: unknown): SpecDiff {
  const isUnknown = (key: SpecKey) => unknown !== undefined && news[key] === unknown;
  const criteriaUnknown = CRITERIA_KEYS.some(isUnknown);
  // Criteria written differently but meaning the same search (`ondemand` for `on-demand`, `gpuModel` for a
  // `gpu_name` filter) are not a change: the criteria are compared as the search they stand for.
  const sameSearch = !criteriaUnknown && sameValue(searchOf(olds), searchOf(news));
  const changed = SPEC_KEYS.filter((key) => {
    if (isUnknown(key)) return true;
    if (sameSearch && isOneOf(key, CRITERIA_KEYS)) return false;
    return !sameValue(withDefault(key, olds[key]), withDefault(key, news[key]));
  });
  const criteriaHold = !criteriaUnknown && stillSatisfied(olds, news);
  const inPlace = (key: SpecKey) => isOneOf(key, UPDATABLE_INPUTS) || isOneOf(key, POLICY_KEYS) || (criteriaHold && isOneOf(key, CRITERIA_KEYS));
  const updates = changed.filter(inPlace);
  const replaces = changed.filter((key) => !inPlace(key));
  const pinned = news.offerId !== undefined && news.offerId !== null && news.offerId === olds.offerId;
  return { changes: changed.length > 0, replaces, updates, deleteBeforeReplace: pinned && replaces.length > 0 };
}

/**
 * Whether the offer rented (`rentedOffer`, kept in the state as it was at rental time) meets new criteria: the
 * same market (on-demand or bid), a price within the new limit, and every new filter.
 */
function stillSatisfied(olds: Readonly<Record<string, any>>, news: Readonly<Record<string, any>>): boolean {
  const rented = olds.rentedOffer as Record<string, unknown> | null | undefined;
  if (!rented) return false;
  if (news.offerId !== undefined && news.offerId !== null) return news.offerId === olds.rentedOfferId;
  if (withDefault("offerType", olds.offerType) !== withDefault("offerType", news.offerType)) return false;
  const paid = withDefault("offerType", olds.offerType) === "bid" ? (olds.price ?? olds.maxPricePerHour ?? rented.dph_total) : rented.dph_total;
  if (news.maxPricePerHour !== undefined && news.maxPricePerHour !== null && !((paid as number) <= news.maxPricePerHour)) return false;
  return offerMatches(rented, filtersOf(news));
}

/** The state the spec's instance is meant to be in. */
export function targetOf(spec: Pick<InstanceSpec, "targetState">): "running" | "stopped" {
  return spec.targetState ?? DEFAULTS.targetState;
}

/** The spec's lifetime policy (undefined when it declares none). */
export function lifetimeOf(spec: InstanceSpec): LifetimePolicy | undefined {
  const { maxLifetime, onLifetimeEnd, idleTimeout, idleAction, idleThreshold } = spec;
  return maxLifetime === undefined && idleTimeout === undefined ? undefined : { maxLifetime, onLifetimeEnd, idleTimeout, idleAction, idleThreshold };
}

/** The search inputs of a spec (one whose check passed), or undefined while one is not known yet (preview). */
export function knownSearch(news: Readonly<Record<string, unknown>>, unknown?: unknown): InstanceSearch | undefined {
  return knownValues(news, SEARCH_KEYS, unknown) as InstanceSearch | undefined;
}

export function criteriaOf(spec: InstanceSearch): OfferCriteria {
  return {
    offerId: spec.offerId,
    filters: spec.offerId !== undefined ? undefined : filtersOf(spec),
    order: spec.order,
    type: spec.offerType,
    maxPricePerHour: spec.maxPricePerHour,
  };
}

/** The offer-search filters a spec stands for: its filters, with the gpuModel/gpuCount sugar folded in. */
function filtersOf(spec: Pick<InstanceSpec, "filters" | "gpuModel" | "gpuCount" | "runtype">): OfferFilters {
  const filters: OfferFilters = { ...spec.filters };
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

/** The creation request (the spec's instance creation table) a spec stands for. */
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
    price: spec.price,
    env: spec.env,
    onstart: spec.onstart,
    args_str: spec.argsStr,
    use_jupyter_lab: spec.useJupyterLab,
    jupyter_dir: spec.jupyterDir,
    python_utf8: spec.pythonUtf8,
    lang_utf8: spec.langUtf8,
    image_login: spec.imageLogin,
    cancel_unavail: spec.cancelUnavail,
    vm: spec.vm,
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

export function withDefault(key: SpecKey, value: unknown): unknown {
  if (key === "offerType" && value === "ondemand") return "on-demand";
  return defaultOf<SpecKey>(DEFAULTS, key, value);
}

function isOneOf<K extends string>(key: string, keys: readonly K[]): key is K {
  return (keys as readonly string[]).includes(key);
}
