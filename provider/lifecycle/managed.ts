import { z } from "zod";
import { ClientOptions, GpuRentalClient } from "../client";
import { AccountRef, resolveConnection } from "../connection";
import { GpuRentalError } from "../errors";
import { CheckFailure, checkSpec, definedOnly, sameValue, WithClient } from "./spec";
import { CreationContext } from "./creation";
import { interruption, tracked } from "./provider-process";
import type { CreationIdentity } from "../workflows/tokens";

/**
 * What every resource kind shares beyond its own spec, in one place: the account it lives in (`account`: a name
 * and where its key is found, never the key) and the adoption of an object that already exists (`adoptId`).
 */

type Props = Readonly<Record<string, any>>;

/**
 * What a kind's functions get: the client of the resource's account, where progress lines go, and (create and
 * update) which creation of which resource it is and the signal that interrupts it.
 */
export interface KindOptions extends WithClient, CreationContext {
  log?: (line: string) => void;
}

export interface Diff {
  changes: boolean;
  replaces: string[];
  deleteBeforeReplace: boolean;
}

/**
 * What a kind's diff may use beyond the two specs: the client of the resource's account, for a kind whose
 * objects can drift in ways that only the service shows (a fleet's member that failed or was destroyed).
 */
export interface DiffOptions {
  client(): GpuRentalClient;
}

/** The functions of one kind, over its own spec; each takes the client of the resource's account. */
export interface KindFunctions {
  check(news: Record<string, unknown>, unknown?: unknown): { inputs: Record<string, unknown>; failures: CheckFailure[] };
  /** Synchronous for most kinds; a promise where the diff looks at the service (GpuFleet). */
  diff(olds: Props, news: Props, unknown?: unknown, options?: DiffOptions): Diff | Promise<Diff>;
  create(inputs: unknown, options: KindOptions): Promise<{ id: string; outs: object }>;
  /** Takes an object that exists under management: checks it is the one the spec declares, and makes it so. */
  adopt(id: string, inputs: unknown, options: KindOptions): Promise<{ id: string; outs: object }>;
  read(id: string, props: Props, options: KindOptions): Promise<object | null>;
  /** An existing object as `pulumi import` takes it: the inputs that declare it as it is, and its outputs. */
  import(id: string, options: KindOptions): Promise<Imported | null>;
  /** Absent where every change of the kind's own inputs replaces. */
  update?(id: string, olds: Props, news: unknown, options: KindOptions): Promise<object>;
  /** `props`: the state, for a kind whose objects are named there (a fleet's members). */
  delete(id: string, options: KindOptions, props: Props): Promise<void>;
  /** What `pulumi preview` can tell of the creation of inputs whose check passed (a kind that rents: a spend cap that will refuse it). */
  warnings?(news: Record<string, unknown>, unknown: unknown, options: WithClient): Promise<string[]>;
}

/**
 * The functions the Pulumi provider calls, one per provider method. `urn` is the resource's (the plugin has it
 * from the engine; a dynamic resource passes it as its URN_INPUT): a creation's tokens are derived from it.
 */
export interface ResourceFunctions {
  /** `olds`: the inputs in the state, if any; the inputs returned carry the creation's generation (GENERATION_INPUT). */
  check(news: Record<string, unknown>, unknown?: unknown, olds?: Props, urn?: string): { inputs: Record<string, unknown>; failures: CheckFailure[] };
  /** A promise for kinds whose diff looks at the service (GpuFleet): callers await it. */
  diff(id: string, olds: Props, news: Props, unknown?: unknown): Diff | Promise<Diff>;
  create(inputs: Props, urn?: string): Promise<{ id: string; outs: object }>;
  /** The current outputs, or null when the thing is gone. */
  read(id: string, props: Props): Promise<object | null>;
  update(id: string, olds: Props, news: Props, urn?: string): Promise<object>;
  delete(id: string, props: Props): Promise<void>;
  /** `pulumi import` by id (of the provider's account): null when there is no such object. */
  import(id: string): Promise<Imported | null>;
  /**
   * Warnings for the engine (the shells send them from `check`): what can be known now of a resource about to be
   * created (`olds` empty). None when that cannot be known (inputs not known yet, a service that does not answer):
   * never an error, `create` checks again.
   */
  warnings(olds: Props, news: Record<string, unknown>, unknown?: unknown): Promise<string[]>;
}

export interface Imported {
  inputs: Record<string, unknown>;
  outs: Record<string, unknown>;
}

/** The inputs every kind takes. */
export const CommonInputs = z.object({
  account: AccountRef.optional(),
  /** The id of an existing object to take under management instead of creating one. */
  adoptId: z.union([z.number().int().positive(), z.string().regex(/^\d+$/, "an id is decimal digits")]).optional(),
});

/**
 * The input that says which creation of its resource a create makes: 0 at first, one more than the state's at each
 * check of a resource the state holds. The tokens of a creation are derived from it and the URN, so the next `up`
 * after a cut-off one makes the same tokens (the state it checks against is the same), and a replacement's new
 * half never makes its old half's.
 */
export const GENERATION_INPUT = "__generation";

/**
 * The generation in the state of each resource checked by this process, by URN. The engine checks a resource
 * about to be replaced twice: against its state, then (for the new half, so that names are made afresh) against
 * nothing; the second check takes the state's generation from the first, as the same `up` always checks in that order.
 */
const checkedGenerations = new Map<string, number>();

/** The generation of the creation a check is for (GENERATION_INPUT). */
function generationOf(olds: Props, urn: string | undefined): number {
  const held = Object.keys(olds).length > 0;
  const previous = held ? Number(olds[GENERATION_INPUT] ?? 0) : urn === undefined ? undefined : checkedGenerations.get(urn);
  if (held && urn !== undefined) checkedGenerations.set(urn, previous!);
  return previous === undefined ? 0 : previous + 1;
}
/** The input that carries a dynamic resource's URN (the dynamic provider host gives `create` none). */
export const URN_INPUT = "__urn";

/** A kind's functions with the account, adoption, creation tokens and interruption handled around them. */
export function managed(kind: string, fns: KindFunctions): ResourceFunctions {
  const check: ResourceFunctions["check"] = (news, unknown, olds = {}, urn) => {
    const own = fns.check(news, unknown);
    const common = Object.fromEntries(Object.entries(news).filter(([k, v]) => k in CommonInputs.shape && v !== null && v !== unknown));
    const inputs = { ...own.inputs, [GENERATION_INPUT]: generationOf(olds, urn) };
    return { inputs, failures: [...own.failures, ...checkSpec(CommonInputs, common).failures] };
  };
  return {
    check,
    diff(id, olds, news, unknown) {
      // The objects live in the account of the state (another account replaces them anyway).
      const own = fns.diff(olds, news, unknown, { client: () => clientFor(olds).client! });
      return own instanceof Promise ? own.then((diff) => withCommon(id, diff, olds, news, unknown)) : withCommon(id, own, olds, news, unknown);
    },
    create: (inputs, urn) => tracked(async () => {
      const options = { ...clientFor(inputs), log: progressLog(kind, inputs), ...creation(inputs, urn) };
      const made = inputs.adoptId !== undefined && inputs.adoptId !== null
        ? await fns.adopt(String(inputs.adoptId), inputs, options)
        : await fns.create(inputs, options);
      return { id: made.id, outs: { ...made.outs, ...commonOf(inputs) } };
    }),
    async read(id, props) {
      const state = await fns.read(id, props, clientFor(props));
      return state && { ...state, ...commonOf(props) };
    },
    update: (id, olds, news, urn) => tracked(async () => {
      if (!fns.update) {
        // Only the account's key source changed (anything else of this kind replaces): nothing to send.
        if ((await fns.diff(olds, news)).changes) throw new GpuRentalError(`${kind} ${id} cannot change in place: its diff should have asked for a replacement.`);
        return { ...olds, ...commonOf(news) };
      }
      const options = { ...clientFor(news), log: progressLog(kind, news), ...creation(news, urn) };
      return { ...(await fns.update(id, olds, news, options)), ...commonOf(news) };
    }),
    delete: (id, props) => tracked(() => fns.delete(id, { ...clientFor(props), log: progressLog(kind, props) }, props)),
    import: (id) => fns.import(id, clientFor({})),
    async warnings(olds, news, unknown) {
      // Only a creation: changes of an existing resource are its diff's, and an adoption rents nothing.
      if (!fns.warnings || Object.keys(olds).length || (news.adoptId !== undefined && news.adoptId !== null)) return [];
      try {
        if (check(news, unknown).failures.length) return [];
        const lines = await fns.warnings(news, unknown, clientFor(news, PREVIEW_CALLS));
        return lines.map((line) => `${nameOf(kind, news, unknown)}: ${line}`);
      } catch {
        return [];
      }
    },
  };

  /** The kind's diff, with what every kind shares: the account, and the guard on adopted objects. */
  function withCommon(id: string, own: Diff, olds: Props, news: Props, unknown?: unknown): Diff {
    const account = accountChange(olds.account, news.account, unknown);
    const replaces = account === "replace" ? [...own.replaces, "account"] : own.replaces;
    if (replaces.length && news.adoptId !== undefined && news.adoptId !== null && String(news.adoptId) === id) {
      throw new GpuRentalError(
        `${kind} ${id} was adopted (adoptId ${id}) and must now be replaced (${replaces.join(", ")} changed): a replacement ` +
          `would adopt the same object again and then delete it. Remove adoptId from the program, then run up again.`,
      );
    }
    return { changes: own.changes || account !== "same", replaces, deleteBeforeReplace: own.deleteBeforeReplace };
  }
}

/** Which creation a create or update makes (when the shell knows the URN), and the provider process's interruption. */
function creation(inputs: Props, urn: string | undefined): CreationContext {
  const identity: CreationIdentity | undefined = urn ? { urn, generation: Number(inputs[GENERATION_INPUT] ?? 0) } : undefined;
  return { identity, signal: interruption() };
}

const clients = new Map<string, GpuRentalClient>();

/** A preview's look at the service is brief: a service that does not answer soon leaves the check to `create`. */
const PREVIEW_CALLS: ClientOptions = { retries: 1, timeoutMs: 5_000, callDeadlineMs: 5_000 };

/**
 * The client of the account a resource names (the provider's default account when it names none): one per
 * account, call options and process, so that every resource of a program shares its request gate (a 429's
 * Retry-After holds all of them back).
 */
function clientFor(props: Props, options: ClientOptions = {}): WithClient {
  const account = props.account ? AccountRef.parse(props.account) : undefined;
  const connection = resolveConnection({}, account);
  const key = `${connection.apiUrl}\n${connection.apiKey}\n${JSON.stringify(options)}`;
  let client = clients.get(key);
  if (!client) clients.set(key, (client = new GpuRentalClient({ ...options, ...connection })));
  return { client };
}

/** Progress of a create or update, on the provider's stderr: the engine shows it with the resource's output. */
function progressLog(kind: string, props: Props): (line: string) => void {
  return (line) => process.stderr.write(`${nameOf(kind, props)}: ${line}\n`);
}

/** The resource as its lines name it: its kind, and its label or name when it has one (known already). */
function nameOf(kind: string, props: Props, unknown?: unknown): string {
  const named = [props.label, props.name, props.labelPrefix].find((v) => typeof v === "string" && v && v !== unknown);
  return `gpu-rental ${kind}${named ? ` ${named}` : ""}`;
}

function commonOf(props: Props): Record<string, unknown> {
  return definedOnly({ account: props.account ?? undefined, adoptId: props.adoptId ?? undefined });
}

/**
 * Another account (name or service URL) is another owner: the object is made anew there. Only where the same
 * account's key is read from changed: an update in place that sends nothing.
 */
function accountChange(olds: unknown, news: unknown, unknown?: unknown): "same" | "update" | "replace" {
  if (unknown !== undefined && news === unknown) return "replace";
  const identity = (a: any) => (a ? { name: a.name, apiUrl: a.apiUrl ?? null } : null);
  if (!sameValue(identity(olds), identity(news))) return "replace";
  return sameValue(olds ?? null, news ?? null) ? "same" : "update";
}
