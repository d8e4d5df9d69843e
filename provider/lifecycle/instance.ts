import { z } from "zod";
import {
  CreateInstanceRequest, describePolicy, DEFAULT_ORDER, GpuRentalError, hasReached, Instance, InstanceFailedError, InstanceLeftError,
  InterruptedError, LIFETIME_KEYS, LifetimeFields, LifetimePolicy, lifetimeProblem, lifetimeWarnings, NotFoundError, OfferCriteria, OfferFilters,
  ownerEnv, RentOptions, rentalWarnings, rentInstance, resourceToken, Runtype, SPEC_ENV, specDigest, sweepCommand, TargetState,
  waitForStatus, watchdogCannotRun,
} from "../../sdk";
import { offerMatches } from "../../sdk/filter-predicate";
import { BOOT_DEFAULTS, BootFailure, BootsFailed, failedFor, Held, limitProgress, observedOutputs, rentAndBoot, targetOf, unseen } from "./boot";
import { interruptedCreation, KEPT_IN_STATE, PARTIAL_OUTPUT, PartialCreationError } from "./creation";
import { attachKeys, changeKeys, keySet, SshKeysSpec } from "./instance-keys";
import { criteriaFilters, CriteriaFields } from "./criteria";
import type { NamedType } from "./description";
import { describeResource } from "./describe";
import { keptOffer } from "./rented-offer";
import type { DiffLook, Kind, Operation, Props } from "./kind";
import { definedOnly, knownValues, sameValue, specOf, withDefault as defaultOf } from "./spec";

/**
 * The Instance kind: one rented GPU instance. Its description, its spec (the declared state, and how two of them
 * compare: the search criteria are placement rules, not identity, so new criteria that the rented machine still
 * satisfies change nothing on the service), and its lifecycle.
 */

const RUNTYPE: NamedType = {
  name: "Runtype",
  description: "How an instance is launched and reached.",
  values: {
    ssh_direct: "SSH straight to the machine's own port (the ssh host and port outputs).",
    ssh_proxy: "SSH through the service's proxy.",
    ssh: "SSH, direct where the machine allows it.",
    jupyter_direct: "Jupyter straight on the machine's port.",
    jupyter_proxy: "Jupyter through the service's proxy.",
    jupyter: "Jupyter, direct where the machine allows it.",
    args: "The image's own entrypoint, with `argsStr` as its arguments.",
  },
};

const TARGET_STATE: NamedType = {
  name: "TargetState",
  description: "The state an instance is kept in.",
  values: {
    running: "Running (and billed for compute).",
    stopped: "Stopped: the disk is kept (and billed), the GPUs are released.",
  },
};

const BOOT_FAILURE: NamedType = {
  name: "BootFailurePolicy",
  description: "What to do when an instance fails to boot (exited, unknown, offline).",
  values: {
    fail: "Destroy it and report the error.",
    replace: "Destroy it and rent another offer, at most `maxBootAttempts` rentals in all.",
  },
};

const LIFETIME_END: NamedType = {
  name: "LifetimeEnd",
  description: "What an instance does at the end of its `maxLifetime`.",
  values: {
    destroy: "Destroy itself: billing ends.",
    stop: "Stop itself: the disk is kept (and billed), the GPUs are released.",
  },
};

const IDLE_ACTION: NamedType = {
  name: "IdleAction",
  description: "What an instance does when its GPUs stayed idle for `idleTimeout`.",
  values: {
    stop: "Stop itself: the disk is kept (and billed).",
    destroy: "Destroy itself: billing ends.",
  },
};

const DESCRIPTION =
  "A rented GPU instance. Label and target state change in place; so do new criteria that the rented machine still meets, and " +
  "the boot-failure policy (recorded, nothing sent). Any other change rents a new instance. The offer actually rented is an " +
  "output: a changed market or a refresh never replaces a running instance.";

/**
 * Where a volume may be mounted: the service's client passes only these characters in a `-v` flag, and a `.` or
 * `..` segment would lead elsewhere.
 */
const MOUNT_PATH = /^(?!.*\/\.{1,2}(\/|$))\/[A-Za-z0-9._/-]*$/;

/**
 * The desired state of one rented instance, as the Pulumi `Instance` resource declares it, and how two of them
 * compare. The search criteria are placement rules, not identity: the offer rented is an output, and new criteria
 * that the rented machine still satisfies change nothing on the service.
 */
const InstanceSpec = z
  .object({
    offerId: z.number().int().optional().meta({ description: "Rent exactly this offer. Otherwise the cheapest offer matching the criteria is rented." }),
    // Placement rules, checked as every search's criteria are: new criteria that the rented machine still meets change nothing.
    ...CriteriaFields,
    image: z.string().min(1).optional().meta({ replaces: true, description: "The container image; may be left out when `templateHashId` gives one." }),
    templateHashId: z.string().min(1).optional().meta({ replaces: true, description: "Create from this template (its `hashId` output): its values are the base, the inputs here win." }),
    label: z.string().optional().meta({ description: "The instance's label; changed in place." }),
    disk: z.number().positive().optional().meta({ replaces: true, description: "Local disk in GB; default 8 (or the template's)." }),
    env: z.record(z.string(), z.string()).optional().meta({ replaces: true, description: "Environment variables of the container." }),
    onstart: z.string().optional().meta({ replaces: true, description: "A script run when the instance starts." }),
    volume: z
      .object({
        volumeId: z.number().int().optional().meta({ description: "An existing network volume of the account (e.g. a NetworkVolume's `volumeId`)." }),
        offerId: z.number().int().optional().meta({ description: "Or a new volume made from this network volume offer, with the instance." }),
        size: z.number().positive().optional().meta({ description: "The new volume's size in GB (with `offerId`)." }),
        mountPath: z.string().min(1).meta({ description: "Where it is mounted in the container, e.g. `/data`." }),
      })
      .strict()
      .refine((v) => (v.volumeId === undefined) !== (v.offerId === undefined), { message: "give volumeId or offerId, not both" })
      .refine((v) => v.offerId === undefined || v.size !== undefined, { message: "a new volume (offerId) needs its size" })
      .optional()
      .meta({
        replaces: true,
        named: { name: "InstanceVolume", description: "A network volume mounted into an instance." },
        description:
          "A network volume mounted at `mountPath`: an existing one (`volumeId`), or a new one of `size` GB from a volume offer " +
          "(`offerId`). Changing it replaces the instance.",
      }),
    // Mounted as `-v V.<id>:<path>`: an absolute path of letters, digits, `.`, `_`, `-` and `/`.
    volumes: z
      .record(z.string().regex(MOUNT_PATH, "a mount path is absolute, of letters, digits, . _ - and /, with no . or .. segment, e.g. /data"), z.number().int().positive())
      .optional()
      .meta({
        replaces: true,
        description:
          "Volumes of the account mounted by path, e.g. `{ \"/data\": dataset.volumeId }`: local volumes (a LocalVolume on this instance's " +
          "machine: rent with the volume's `askContractId` as `offerId`) and network volumes. What is written there outlives the instance. " +
          "Sent as `-v V.<id>:<path>` in the container's flags, as the service takes them. Changing it replaces the instance.",
      }),
    runtype: Runtype.optional().meta({
      replaces: true,
      named: RUNTYPE,
      tsType: "Runtype",
      description: "Launch mode; default `ssh_direct` (or the template's), which gives the ssh host and port outputs.",
    }),
    targetState: TargetState.optional().meta({ named: TARGET_STATE, tsType: "TargetState", default: BOOT_DEFAULTS.targetState, description: "`running` or `stopped`; changed in place." }),
    price: z.number().positive().optional().meta({
      description:
        "The bid of an interruptible rental ($/hour); default `maxPricePerHour`, else the offer's minimum bid. Changed in place: a bid below the offer's minimum stops the instance (outbid), a higher one boots it again.",
    }),
    argsStr: z.string().optional().meta({ replaces: true, description: "Replaces the image's command (runtype `args`)." }),
    useJupyterLab: z.boolean().optional().meta({ replaces: true, description: "Jupyter Lab rather than the classic notebook." }),
    jupyterDir: z.string().optional().meta({ replaces: true, description: "The folder Jupyter opens in." }),
    pythonUtf8: z.boolean().optional().meta({ replaces: true, description: "Sets PYTHONUTF8=1 in the container." }),
    langUtf8: z.boolean().optional().meta({ replaces: true, description: "Sets a UTF-8 locale in the container." }),
    imageLogin: z.string().optional().meta({ replaces: true, secret: true, description: "Registry login for a private image, `-u <user> -p <token> <registry>`: always kept secret." }),
    cancelUnavail: z.boolean().optional().meta({ replaces: true, description: "Fail at once when the instance cannot start right away." }),
    vm: z.boolean().optional().meta({ replaces: true, description: "A VM instead of a container." }),
    onBootFailure: z.enum(["fail", "replace"]).optional().meta({
      named: BOOT_FAILURE,
      default: BOOT_DEFAULTS.onBootFailure,
      description: "When the instance fails to boot: `fail` (destroyed, and the error reported), or `replace` it with another offer.",
    }),
    maxBootAttempts: z.number().int().min(1).max(10).optional().meta({
      default: BOOT_DEFAULTS.maxBootAttempts,
      description:
        "Rentals tried in all with `onBootFailure: replace`, and for an instance that does not come up within the boot deadline " +
        "(whatever the policy: the service has accepted one offer twice and left the second instance never booting).",
    }),
    // The instance ends itself (sdk/workflows/watchdog.ts); the defaults are the watchdog's own.
    maxLifetime: LifetimeFields.maxLifetime.meta({
      description:
        'The instance ends itself this long after its boot (`"90s"`, `"15m"`, `"6h"`, `"2d"`), even when the program and the machine ' +
        "it ran on are gone: a watchdog started from onstart calls the service with the instance's own key. Needs an SSH or Jupyter " +
        "runtype (refused at preview with runtype `args`). Changing it replaces nothing: the running watchdog keeps its policy " +
        "(`lifetimeInEffect`); the new one applies to the next instance rented. See docs/spend-guard.md.",
    }),
    onLifetimeEnd: LifetimeFields.onLifetimeEnd.meta({ named: LIFETIME_END, default: "destroy", description: "What the instance does at the end of `maxLifetime`." }),
    idleTimeout: LifetimeFields.idleTimeout.meta({ description: "The instance ends itself when every GPU stayed below `idleThreshold` (read with nvidia-smi) for this long." }),
    idleAction: LifetimeFields.idleAction.meta({ named: IDLE_ACTION, default: "stop", description: "What the instance does when idle for `idleTimeout`." }),
    idleThreshold: LifetimeFields.idleThreshold.meta({ default: 10, description: "GPU utilisation, percent, below which a GPU counts as idle." }),
    // Attached once the instance is created; changed in place (instance-keys.ts).
    sshKeys: SshKeysSpec,
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

type SpecKey = keyof InstanceSpec & string;
/** The inputs of the spec, from its shape. */
const SPEC = specOf("Instance", InstanceSpec);

/**
 * Inputs changed in place: by `PUT /api/v0/instances/{id}/` (label, target state), and the bid of an
 * interruptible instance by `PUT /api/v0/instances/bid_price/{id}/` (an on-demand instance only records it).
 */
const UPDATABLE_INPUTS = ["label", "targetState", "price"] as const;
/** Inputs that say which offer to rent: placement rules, recorded in place while the rented machine satisfies them. */
const CRITERIA_KEYS = ["offerId", "gpuModel", "gpuCount", "filters", "order", "offerType", "maxPricePerHour"] as const;
/** Inputs that decide the offer search (the criteria, and the runtype, which may ask for a direct port). */
const SEARCH_KEYS = [...CRITERIA_KEYS, "runtype"] as const;
type InstanceSearch = Pick<InstanceSpec, (typeof SEARCH_KEYS)[number]>;
/**
 * Inputs that only steer the creation: recorded in place, nothing sent. The lifetime policy is among them: the
 * watchdog on a running instance keeps the policy it was started with (`lifetimeInEffect`); a new one applies to
 * the next instance rented (a replacement), so changing it never replaces a running instance.
 */
const POLICY_KEYS = ["onBootFailure", "maxBootAttempts", ...LIFETIME_KEYS] as const;
/** Keys attached to the instance after its creation: attached and detached in place. */
const ATTACHED_INPUTS = ["sshKeys"] as const;

/** Defaults applied before comparing, so writing a default explicitly is not a change. */
const DEFAULTS = {
  disk: 8,
  runtype: "ssh_direct" as Runtype,
  targetState: BOOT_DEFAULTS.targetState as TargetState,
  label: "",
  env: {},
  offerType: "on-demand",
  order: DEFAULT_ORDER,
  onBootFailure: BOOT_DEFAULTS.onBootFailure,
  maxBootAttempts: BOOT_DEFAULTS.maxBootAttempts,
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
  const changed = (SPEC.keys as SpecKey[]).filter((key) => {
    if (isUnknown(key)) return true;
    if (sameSearch && isOneOf(key, CRITERIA_KEYS)) return false;
    return !sameValue(withDefault(key, olds[key]), withDefault(key, news[key]));
  });
  const criteriaHold = !criteriaUnknown && stillSatisfied(olds, news);
  const inPlace = (key: SpecKey) =>
    isOneOf(key, UPDATABLE_INPUTS) || isOneOf(key, POLICY_KEYS) || isOneOf(key, ATTACHED_INPUTS) || (criteriaHold && isOneOf(key, CRITERIA_KEYS));
  const updates = changed.filter(inPlace);
  const replaces = changed.filter((key) => !inPlace(key));
  const pinned = news.offerId !== undefined && news.offerId !== null && news.offerId === olds.offerId;
  return { changes: changed.length > 0, replaces, updates, deleteBeforeReplace: pinned && replaces.length > 0 };
}

/**
 * Whether the offer rented (`rentedOffer`, kept in the state as it was at rental time: the fields criteria compare,
 * or the whole offer in a state written before) meets new criteria: the same market (on-demand or bid), a price
 * within the new limit, and every new filter (one on a field not kept is not met).
 */
function stillSatisfied(olds: Readonly<Record<string, any>>, news: Readonly<Record<string, any>>): boolean {
  const rented = olds.rentedOffer as Record<string, unknown> | null | undefined;
  if (!rented) return false;
  if (news.offerId !== undefined && news.offerId !== null) return news.offerId === olds.rentedOfferId;
  if (withDefault("offerType", olds.offerType) !== withDefault("offerType", news.offerType)) return false;
  // A bid instance pays its bid: the new one, which an update sends (rebids).
  const paid = withDefault("offerType", olds.offerType) === "bid" ? (declaredBid(news) ?? rented.dph_total) : rented.dph_total;
  if (news.maxPricePerHour !== undefined && news.maxPricePerHour !== null && !((paid as number) <= news.maxPricePerHour)) return false;
  return offerMatches(rented, filtersOf(news));
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

/** The offer-search filters a spec stands for: its criteria's, and a direct port for a direct runtype. */
function filtersOf(spec: Pick<InstanceSpec, "filters" | "gpuModel" | "gpuCount" | "runtype">): OfferFilters {
  const filters = criteriaFilters(spec);
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
    env: envWithMounts(spec.env, spec.volumes),
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

/** The container's env with a `-v V.<id>:<path>` key for each mounted volume, as the service's client sends them. */
function envWithMounts(env: Record<string, string> | undefined, volumes: Record<string, number> | undefined): Record<string, string> | undefined {
  if (!volumes || !Object.keys(volumes).length) return env;
  return { ...env, ...Object.fromEntries(Object.entries(volumes).map(([mountPath, id]) => [`-v V.${id}:${mountPath}`, "1"])) };
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

function withDefault(key: SpecKey, value: unknown): unknown {
  if (key === "offerType" && value === "ondemand") return "on-demand";
  if (key === "sshKeys") return keySet(value);
  return defaultOf<SpecKey>(DEFAULTS, key, value);
}

function isOneOf<K extends string>(key: string, keys: readonly K[]): key is K {
  return (keys as readonly string[]).includes(key);
}

/** What a created instance reports back (Pulumi outputs). Nulls, never undefined: gRPC cannot carry undefined. */
/** What an instance reports besides its inputs: what it is on the service (observedOutputs), and what it was rented from. */
const InstanceOutputs = z.object({
  instanceId: z.int().meta({ description: "The instance's id (also the resource's id)." }),
  status: z.string().nullable().meta({ description: "The instance's status as the service reports it (`running`, `loading`, ...)." }),
  sshHost: z.string().nullable().meta({ description: "The host to reach it over SSH." }),
  sshPort: z.int().nullable().meta({ description: "The port to reach it over SSH." }),
  rentedOfferId: z.int().nullable().meta({ description: "The offer rented; null for an adopted or imported instance." }),
  rentedOffer: z.record(z.string(), z.unknown()).nullable().meta({
    description:
      "Of the offer as it was when rented, its `id` and the fields criteria compare (`gpu_name`, `num_gpus`, `gpu_ram`, `dph_total`, `min_bid`, `reliability`, `geolocation`, `direct_port_count`, and every field its filters name): what new criteria are checked against.",
  }),
  machineId: z.int().nullable().meta({ description: "The machine it runs on." }),
  gpuName: z.string().nullable().meta({ description: "Its GPU model." }),
  numGpus: z.int().nullable().meta({ description: "Its GPU count." }),
  pricePerHour: z.number().nullable().meta({ description: "What it costs, $/hour." }),
  geolocation: z.string().nullable().meta({ description: "Where the machine is." }),
  instanceApiKey: z.string().nullable().meta({ secret: true, description: "The instance's own restricted key (`CONTAINER_API_KEY`); kept secret in state." }),
  // The watchdog keeps the policy it was started with until the instance is replaced.
  lifetimeInEffect: z.string().nullable().meta({ description: "The lifetime policy the instance's watchdog runs with (null: none)." }),
});
export type InstanceOutputs = z.infer<typeof InstanceOutputs>;

export const INSTANCE: Kind<InstanceSpec, InstanceOutputs> = {
  description: describeResource({ name: "Instance", description: DESCRIPTION, inputs: InstanceSpec, outputs: InstanceOutputs }),
  spec: SPEC,
  diff: diffInstance,
  create: createInstance,
  adopt: adoptInstance,
  read: readInstance,
  import: importInstance,
  update: updateInstance,
  delete: deleteInstance,
  warnings: instanceWarnings,
};

/**
 * Creates the instance a spec declares and waits until it is in its target state (rentAndBoot): an instance that
 * fails to boot is destroyed before anything else happens, then another offer is rented (at most
 * `maxBootAttempts` rentals) with `onBootFailure: replace`, or when it did not come up within the boot deadline,
 * else the error is raised. Nothing is left half-created (or billed).
 *
 * With `identity` (a Pulumi resource), the instance carries the resource's token and its spec's digest: an
 * instance that an earlier, cut-off run of this creation rented is taken over when it was rented for this spec
 * and destroyed when not. Interrupted (`signal`) while an instance boots, or failing with an instance that cannot
 * be destroyed, the creation throws a PartialCreationError holding it, so the stack's state does.
 */
async function createInstance(spec: InstanceSpec, op: Operation): Promise<{ id: string; outs: InstanceSpec & InstanceOutputs }> {
  const token = op.identity && resourceToken(op.identity);
  const digest = instanceDigest(spec);
  const request = creationRequestOf(spec);
  if (token) request.env = { ...request.env, [SPEC_ENV]: digest, ...ownerEnv(op.identity!) };
  const rentOptions: RentOptions = { clock: op.clock, ...op.rent, token, signal: op.signal };
  // A policy is reported in effect only where a watchdog can run (not on an emulator without machines).
  const lifetime = lifetimeOf(spec);
  const unenforced = lifetime && (await watchdogCannotRun(op.client));
  if (lifetime && unenforced) op.log(`its lifetime policy (${describePolicy(lifetime)}) is not in effect: ${unenforced}`);
  const outputs = (held: Held) => createdOutputs(spec, held.instance ?? unseen(held.instanceId), held, !unenforced);
  try {
    const [held] = await rentAndBoot(
      {
        policy: spec,
        indices: [0],
        tokenOf: () => token,
        digestOf: () => digest,
        who: (held) => `instance ${held.instanceId}`,
        rent: async (_pending, failedOffers, _boot, into) => void into.push(await rent(spec, request, failedOffers, rentOptions, op, outputs)),
      },
      op,
      rentOptions,
    );
    await attachAfterCreation(held.instanceId, spec, op, () => outputs(held));
    return { id: String(held.instanceId), outs: outputs(held) };
  } catch (error) {
    if (!(error instanceof BootFailure)) throw error;
    const [held] = error.held;
    if (error.interrupted) {
      if (!held) throw interruptedCreation(error.error as InterruptedError, "The instance's creation");
      throw new PartialCreationError(`Instance ${held.instanceId} was rented and the creation interrupted before it was ${targetOf(spec)}. ${KEPT_IN_STATE}`,
        String(held.instanceId), outputs(held));
    }
    const cause = error.error instanceof BootsFailed ? error.error.first.error : error.error;
    if (!held || !error.cleanup) throw cause;
    const sweep = held.token ? ` (outside Pulumi: \`${sweepCommand(held.token)}\`)` : "";
    throw new PartialCreationError(
      `${cause.message} Then ${error.cleanup.message}. ${KEPT_IN_STATE}${sweep}`,
      String(held.instanceId), outputs(held), [cause.message, error.cleanup.message],
    );
  }
}

/**
 * Attaches the spec's SSH keys to the instance just created; failing, the instance is held by the state (a
 * PartialCreationError), and the next `up` attaches them.
 */
export async function attachAfterCreation(instanceId: number, spec: Pick<InstanceSpec, "sshKeys">, op: Operation, outputs: () => object): Promise<void> {
  try {
    await attachKeys(op.client, [instanceId], spec.sshKeys);
  } catch (error) {
    throw new PartialCreationError(
      `Instance ${instanceId} was rented, and attaching its SSH keys failed: ${(error as Error).message} ${KEPT_IN_STATE}`, String(instanceId), outputs(),
    );
  }
}

/**
 * One rental for the spec, away from the offers that failed to boot; an instance left without its key is held by
 * the state, with the creation's `outputs`.
 */
async function rent(
  spec: InstanceSpec, request: CreateInstanceRequest, failedOffers: number[], options: RentOptions, op: Operation,
  outputs: (held: Held) => InstanceSpec & InstanceOutputs,
): Promise<Held> {
  const criteria = criteriaOf(spec);
  if (failedOffers.length) criteria.filters = { ...criteria.filters, id: { ...criteria.filters?.id, notin: failedOffers } };
  try {
    const rented = await rentInstance(op.client, criteria, request, {
      requireInstanceKey: true,
      ...options,
      lifetime: lifetimeOf(spec),
      maxHourlySpend: options.maxHourlySpend ?? op.spendCap(),
      onAttempt: (attempt) => {
        op.log(`offer ${attempt.offerId}: ${attempt.outcome}${attempt.detail ? ` (${attempt.detail})` : ""} after ${(attempt.atMs / 1000).toFixed(1)} s`);
        options.onAttempt?.(attempt);
      },
      onWait: limitProgress(op),
    });
    return { index: 0, instanceId: rented.instanceId, offer: rented.offer, key: rented.instanceApiKey ?? null, token: rented.token };
  } catch (error) {
    if (!(error instanceof InstanceLeftError)) throw error;
    const held = { index: 0, instanceId: error.instanceId, offer: null, key: null };
    throw new PartialCreationError(`${error.message} ${KEPT_IN_STATE}`, String(error.instanceId), outputs(held));
  }
}

/** The digest an instance rented for `spec` carries (SPEC_ENV): of every input but the secret one and the keys attached later. */
export function instanceDigest(spec: InstanceSpec): string {
  const { imageLogin: _secret, sshKeys: _attached, ...rest } = spec;
  return specDigest(rest);
}

/** The outputs of a created instance, as seen (or known by id only, when it was never seen). */
function createdOutputs(spec: InstanceSpec, instance: Instance, held: Pick<Held, "offer" | "key">, enforced: boolean): InstanceSpec & InstanceOutputs {
  const lifetime = enforced && lifetimeOf(spec);
  return {
    ...spec, ...observedOutputs(instance), rentedOfferId: held.offer?.id ?? null,
    rentedOffer: offerKept(held.offer, spec), instanceApiKey: held.key, lifetimeInEffect: lifetime ? describePolicy(lifetime) : null,
  };
}

/**
 * What preview can say of the rental of inputs whose check passed: that its lifetime policy will not be enforced
 * (an emulator without machines); that no offer on the market matches them, or that the stack's maxHourlySpend
 * will refuse it (nothing while an input that decides the search is not known yet).
 */
async function instanceWarnings(news: Props, unknown: unknown, op: Operation): Promise<string[]> {
  const search = knownSearch(news, unknown);
  const lifetime = await lifetimeWarnings(op.client, knownValues(news, LIFETIME_KEYS, unknown) as LifetimePolicy | undefined);
  return [...lifetime, ...(search ? await rentalWarnings(op.client, criteriaOf(search), op.spendCap()) : [])];
}

/** The current outputs of an instance, or null when it no longer exists (refresh then drops it from state). */
async function readInstance(id: string, props: Props, op: Operation): Promise<(Record<string, unknown> & InstanceOutputs) | null> {
  const instance = await op.client.instances.get(Number(id));
  if (!instance) return null;
  return { ...props, ...observedSpec(instance), ...observedOutputs(instance), rentedOfferId: rentedOfferOf(props), ...keptOutputs(props) };
}

/**
 * What only the creation knew, carried over from the state: the instance key, the offer as rented (as much of it as
 * the criteria of `spec` compare), its watchdog.
 */
function keptOutputs(props: Props, spec: Readonly<Record<string, any>> = props): Pick<InstanceOutputs, "instanceApiKey" | "rentedOffer" | "lifetimeInEffect"> {
  return { instanceApiKey: props.instanceApiKey ?? null, rentedOffer: offerKept(props.rentedOffer, spec), lifetimeInEffect: props.lifetimeInEffect ?? null };
}

/** Of the offer rented, what the state keeps for the criteria of `spec` (rented-offer.ts). */
export function offerKept(offer: Readonly<Record<string, unknown>> | null | undefined, spec: Readonly<Record<string, any>>): Record<string, unknown> | null {
  return keptOffer(offer, filtersOf(spec));
}

/**
 * The provider's diff: the specs (diffInstanceSpec), and, for an instance whose creation did not finish (its
 * state is a partial creation's), the instance as the service shows it: failed or gone, it is replaced, as a
 * failed boot is; still booting, the update waits for it.
 */
function diffInstance(olds: Props, news: Props, unknown?: unknown, look?: DiffLook): SpecDiff | Promise<SpecDiff> {
  const diff = diffInstanceSpec(olds, news, unknown);
  // A bid the offer rented would refuse is said at preview, naming the input.
  if (!diff.replaces.length && rebids(olds, news as InstanceSpec)) checkBid(Number(olds.instanceId), news as InstanceSpec, olds.rentedOffer);
  const target = targetOf(olds);
  if (diff.replaces.length || !look || !olds[PARTIAL_OUTPUT] || typeof olds.instanceId !== "number") return diff;
  const waits: SpecDiff = { ...diff, changes: true, updates: [...diff.updates, "status"] };
  return look.client().instances.get(olds.instanceId).then(
    (instance) => {
      if (instance && !failedFor(instance, target)) return waits;
      const pinned = news.offerId !== undefined && news.offerId !== null && news.offerId === olds.offerId;
      return { ...diff, changes: true, replaces: ["status"], deleteBeforeReplace: pinned };
    },
    // The service does not answer: the update looks again, and waits.
    () => waits,
  );
}

type RentedOffer = { min_bid?: number | null } | null | undefined;

/** The bid a spec (or a state) declares: its price, else its limit; null when neither. */
const declaredBid = (spec: Readonly<Record<string, any>>): number | null => spec.price ?? spec.maxPricePerHour ?? null;

/** The bid the spec asks for, as at rental: the declared one, else the minimum of the offer rented. */
const bidOf = (spec: InstanceSpec, rented: RentedOffer) => declaredBid(spec) ?? rented?.min_bid ?? undefined;

/** Refuses a bid below the minimum of the offer rented, which would stop the instance (outbid): nothing is sent. */
export function checkBid(id: number, spec: InstanceSpec, rented: RentedOffer): void {
  const bid = bidOf(spec, rented);
  const minimum = rented?.min_bid;
  if (typeof bid === "number" && typeof minimum === "number" && bid < minimum) {
    throw new GpuRentalError(`Instance ${id}: the bid of ${bid} $/hour (price, else maxPricePerHour) is below the minimum bid of its offer (${minimum} $/hour) and would stop it (outbid). Bid at least ${minimum}.`);
  }
}

/** Bids again as the spec says (an instance whose offer is not in the state, an adopted one, read for its minimum). */
export async function changeBid(op: Operation, id: number, spec: InstanceSpec, rented: RentedOffer): Promise<void> {
  const bid = bidOf(spec, rented) ?? (await op.client.instances.get(id))?.min_bid;
  if (typeof bid !== "number") throw new GpuRentalError(`Instance ${id}: no bid to send (no price, no maxPricePerHour, and its offer's minimum bid is unknown): declare price.`);
  await op.client.instances.changeBid(id, bid);
}

/**
 * Whether an update bids again: the bid the spec asks for (its price, else its limit) changed, on an interruptible
 * rental (an on-demand one only records them).
 */
export function rebids(olds: Readonly<Record<string, any>>, spec: InstanceSpec): boolean {
  return withDefault("offerType", spec.offerType) === "bid" && declaredBid(olds) !== declaredBid(spec);
}

/** Applies the in-place changes (label, target state, bid) and returns the new outputs. */
async function updateInstance(id: string, olds: Props, spec: InstanceSpec, op: Operation): Promise<Record<string, unknown> & InstanceOutputs> {
  const diff = diffInstanceSpec(olds, spec as Record<string, unknown>);
  if (diff.replaces.length) {
    throw new GpuRentalError(`Instance ${id}: ${diff.replaces.join(", ")} cannot change in place (the engine should replace it).`);
  }
  const lifetime = lifetimeOf(spec);
  const declared = lifetime ? describePolicy(lifetime) : null;
  if (declared !== (olds.lifetimeInEffect ?? null)) {
    op.log(`instance ${id}: its watchdog keeps the lifetime it was started with (${olds.lifetimeInEffect ?? "none"}); ` +
      `the new one (${declared ?? "none"}) applies to the next instance rented for this resource. Replace it to apply it now (pulumi up --replace).`);
  }
  const change: { label?: string; state?: "running" | "stopped" } = {};
  if (diff.updates.includes("label")) change.label = spec.label ?? DEFAULTS.label;
  if (diff.updates.includes("targetState")) change.state = spec.targetState ?? DEFAULTS.targetState;
  if (change.label !== undefined || change.state !== undefined) await op.client.instances.update(Number(id), change);
  if (rebids(olds, spec)) {
    checkBid(Number(id), spec, olds.rentedOffer);
    await changeBid(op, Number(id), spec, olds.rentedOffer);
  }
  const target = targetOf(spec);
  // Built from the new spec, not the old state: an input the program dropped must not linger in the outputs.
  const outputs = (instance: Instance) => ({
    ...spec, label: spec.label ?? DEFAULTS.label, targetState: target, ...observedOutputs(instance), rentedOfferId: rentedOfferOf(olds), ...keptOutputs(olds, spec),
  });
  const current = await op.client.instances.get(Number(id));
  if (!current) throw new GpuRentalError(`Instance ${id} no longer exists; run \`pulumi refresh\` to drop it from the stack.`);
  // A creation cut off before its keys were attached left the state saying them: all are attached again.
  const partial = !!olds[PARTIAL_OUTPUT];
  if (diff.updates.includes("sshKeys") || partial) await changeKeys(op.client, [Number(id)], olds.sshKeys, spec.sshKeys, partial);
  // A creation cut off while the instance booted left it in the state before its target: the wait goes on here.
  if (!change.state && hasReached(current, target)) return outputs(current);
  try {
    return outputs(await waitForStatus(op.client, Number(id), target, { clock: op.clock, ...op.wait, signal: op.signal }));
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
export async function adoptInstance(id: string, spec: InstanceSpec, op: Operation): Promise<{ id: string; outs: Record<string, unknown> }> {
  const instance = await op.client.instances.get(Number(id));
  if (!instance) {
    throw new NotFoundError(`Instance ${id} cannot be adopted: the account has no instance ${id}. Check adoptId, and the account the resource uses.`);
  }
  if (spec.image !== undefined && instance.image_uuid && withTag(spec.image) !== withTag(instance.image_uuid)) {
    throw new GpuRentalError(
      `Instance ${id} cannot be adopted as declared: it runs ${instance.image_uuid}, the program declares image ${spec.image}. ` +
        "Declare the image it runs (changing it later replaces the instance).",
    );
  }
  // Its keys are attached as any update attaches keys added: none were there before.
  const olds = { ...spec, ...observedSpec(instance), sshKeys: [], rentedOfferId: null, rentedOffer: null, instanceApiKey: null, lifetimeInEffect: null };
  return { id, outs: await updateInstance(id, olds, spec, op) };
}

/**
 * An existing instance as `pulumi import` takes it: the inputs that declare it as it is (its image, label, state
 * and disk; defaults left out), and its outputs. Its offer and its instance key are not known. Null when it does
 * not exist.
 */
async function importInstance(id: string, op: Operation): Promise<{ inputs: Record<string, unknown>; outs: Record<string, unknown> } | null> {
  const instance = await op.client.instances.get(Number(id));
  if (!instance) return null;
  const observed = observedSpec(instance);
  const inputs = definedOnly({
    image: instance.image_uuid ?? undefined,
    templateHashId: instance.image_uuid ? undefined : (instance.template_hash_id ?? undefined),
    label: observed.label || undefined,
    targetState: observed.targetState === DEFAULTS.targetState ? undefined : observed.targetState,
    disk: instance.disk_space === null || instance.disk_space === undefined || instance.disk_space === DEFAULTS.disk ? undefined : instance.disk_space,
  });
  return { inputs, outs: { ...inputs, ...observedOutputs(instance), rentedOfferId: null, rentedOffer: null, instanceApiKey: null } };
}

/** The inputs that can be read back from an instance record: what a refresh or an adoption compares. */
function observedSpec(instance: Instance): Record<string, unknown> {
  const observed: Record<string, unknown> = { label: instance.label ?? "" };
  if (instance.cur_state === "stopped" || instance.cur_state === "running") observed.targetState = instance.cur_state;
  return observed;
}

function rentedOfferOf(props: Props): number | null {
  return typeof props.rentedOfferId === "number" && props.rentedOfferId >= 0 ? props.rentedOfferId : null;
}

/** An image name with its tag written out (`latest` when none is given), for comparison. */
function withTag(image: string): string {
  return /:[^/]+$/.test(image) ? image : `${image}:latest`;
}

/** Destroys the instance; one already gone counts as destroyed. */
async function deleteInstance(id: string, _props: Props, op: Operation): Promise<void> {
  if (await op.client.instances.get(Number(id))) await op.client.instances.destroy(Number(id));
}
