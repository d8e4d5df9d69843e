import { z } from "zod";
import { AccountRef, ClientOptions, GpuRentalError, resourceName } from "../../sdk";
import type { ProviderContext } from "./context";
import type { Diff, Imported, Kind, Operation, Props } from "./kind";
import { CheckFailure, checkSpec, definedOnly, sameValue, unknownInputs } from "./spec";

/**
 * A kind's functions as the Pulumi shells call them, one per provider method, over the provider's context: what
 * every kind shares is done here once. The account a resource lives in (`account`: a name and where its key is
 * found, never the key), the adoption of an object that already exists (`adoptId`), the creation's generation and
 * the interruption of the process, and parsing the inputs once before the kind's functions get them.
 */
export interface ResourceFunctions {
  /**
   * `olds`: the inputs in the state, if any; `urn`: the resource's (its last part is the resource's name). The
   * inputs returned carry the kind's defaults and the creation's generation (GENERATION_INPUT).
   */
  check(news: Props, unknown?: unknown, olds?: Props, urn?: string): { inputs: Record<string, unknown>; failures: CheckFailure[] };
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
   * What the service tells now of a resource about to be created (`olds` empty), which the shells add to `check`:
   * warnings for the engine (a spend cap that will refuse it) and refusals of inputs (a volume larger than its
   * offer). Nothing when that cannot be known (inputs not known yet, a service that does not answer): `create`
   * checks again.
   */
  lookAhead(olds: Props, news: Props, unknown?: unknown, urn?: string): Promise<LookAhead>;
}

/** What `lookAhead` found: warnings for the engine, and inputs the service would refuse. */
export interface LookAhead {
  warnings: string[];
  failures: CheckFailure[];
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

export { URN_INPUT } from "./urn-input";

/** A preview's look at the service is brief: a service that does not answer soon leaves the check to `create`. */
const PREVIEW_CALLS: ClientOptions = { retries: 1, timeoutMs: 5_000, callDeadlineMs: 5_000 };

/** A kind's functions with the account, adoption, creation tokens and interruption handled around them. */
export function managed(kind: Kind, context: ProviderContext): ResourceFunctions {
  const name = kind.description.name;
  const check: ResourceFunctions["check"] = (news, unknown, olds = {}, urn) => {
    const own = kind.check ? kind.check(news, { name: urn && resourceName(urn), unknown }) : { inputs: { ...news }, failures: kind.spec.check(news, unknown) };
    const common = Object.fromEntries(Object.entries(news).filter(([k, v]) => k in CommonInputs.shape && v !== null && v !== unknown));
    const held = Object.keys(olds).length > 0 ? Number(olds[GENERATION_INPUT] ?? 0) : undefined;
    const inputs = { ...own.inputs, [GENERATION_INPUT]: context.generationOf(held, urn) };
    // A name the kind does not take, unless its own check refused it already (a fleet's `label`).
    const reported = new Set(own.failures.map((f) => f.property));
    const strangers = unknownInputs(name, [...kind.spec.keys, ...Object.keys(CommonInputs.shape)], news).filter((f) => !reported.has(f.property));
    return { inputs, failures: [...own.failures, ...checkSpec(CommonInputs, common).failures, ...strangers] };
  };
  /** The operation on a resource of these inputs: its account's client, and (create, update) which creation it is. */
  const operation = (props: Props, urn?: string, calls?: ClientOptions): Operation => ({
    client: context.client(accountOf(props), calls),
    leftBehind: context.leftBehind(context.client(accountOf(props))),
    clock: context.clock,
    log: (line) => context.write(`${nameOf(name, props)}: ${line}`, urn),
    spendCap: () => context.spendCap(),
    identity: urn ? { urn, generation: Number(props[GENERATION_INPUT] ?? 0) } : undefined,
    signal: context.stop.signal,
  });
  return {
    check,
    diff(id, olds, news, unknown) {
      // The objects live in the account of the state (another account replaces them anyway).
      const own = kind.diff(olds, news, unknown, { client: () => context.client(accountOf(olds)) });
      return own instanceof Promise ? own.then((diff) => withCommon(id, diff, olds, news, unknown)) : withCommon(id, own, olds, news, unknown);
    },
    create: (inputs, urn) => context.stop.tracked(async () => {
      const spec = kind.spec.parse(inputs);
      const op = operation(inputs, urn);
      const made = await listingAgainAfterFailure(op, () =>
        inputs.adoptId !== undefined && inputs.adoptId !== null ? kind.adopt(String(inputs.adoptId), spec, op) : kind.create(spec, op),
      );
      return { id: made.id, outs: { ...made.outs, ...commonOf(inputs) } };
    }),
    async read(id, props) {
      const state = await kind.read(id, props, operation(props));
      return state && { ...state, ...commonOf(props) };
    },
    update: (id, olds, news, urn) => context.stop.tracked(async () => {
      if (!kind.update) {
        // Only the account's key source changed (anything else of this kind replaces): nothing to send.
        if ((await kind.diff(olds, news)).changes) throw new GpuRentalError(`${name} ${id} cannot change in place: its diff should have asked for a replacement.`);
        return { ...olds, ...commonOf(news) };
      }
      const op = operation(news, urn);
      return { ...(await listingAgainAfterFailure(op, () => kind.update!(id, olds, kind.spec.parse(news), op))), ...commonOf(news) };
    }),
    delete: (id, props) => context.stop.tracked(() => kind.delete(id, props, operation(props))),
    import: (id) => kind.import(id, operation({})),
    async lookAhead(olds, news, unknown, urn) {
      // Only a creation: changes of an existing resource are its diff's, and an adoption rents nothing.
      const nothing: LookAhead = { warnings: [], failures: [] };
      if ((!kind.warnings && !kind.refusals) || Object.keys(olds).length || (news.adoptId !== undefined && news.adoptId !== null)) return nothing;
      try {
        const { inputs, failures } = check(news, unknown, {}, urn);
        if (failures.length) return nothing;
        const op = operation(inputs, undefined, PREVIEW_CALLS);
        const [lines, refused] = await Promise.all([kind.warnings?.(inputs, unknown, op) ?? [], kind.refusals?.(inputs, unknown, op).catch(() => []) ?? []]);
        return { warnings: lines.map((line) => `${nameOf(name, inputs, unknown)}: ${line}`), failures: refused };
      } catch {
        return nothing;
      }
    },
  };

  /** The kind's diff, with what every kind shares: the account, and the guard on adopted objects. */
  function withCommon(id: string, own: Diff, olds: Props, news: Props, unknown?: unknown): Diff {
    const account = accountChange(olds.account, news.account, unknown);
    const replaces = account === "replace" ? [...own.replaces, "account"] : own.replaces;
    if (replaces.length && news.adoptId !== undefined && news.adoptId !== null && String(news.adoptId) === id) {
      throw new GpuRentalError(
        `${name} ${id} was adopted (adoptId ${id}) and must now be replaced (${replaces.join(", ")} changed): a replacement ` +
          `would adopt the same object again and then delete it. Remove adoptId from the program, then run up again.`,
      );
    }
    return { changes: own.changes || account !== "same", replaces, deleteBeforeReplace: own.deleteBeforeReplace };
  }
}

/** The account a resource names (none: the provider's default account). */
function accountOf(props: Props): AccountRef | undefined {
  return props.account ? AccountRef.parse(props.account) : undefined;
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

/** A creation (or update) that failed may have left an instance carrying its token: the next one lists again. */
async function listingAgainAfterFailure<T>(op: Operation, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    op.leftBehind?.forget();
    throw error;
  }
}
