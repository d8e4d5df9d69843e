import { z } from "zod";
import { canonicalJson, describeIssues, GpuRentalError, nearestName } from "../../sdk";

/**
 * What the kinds share: checking a declared spec with its zod schema the way the Pulumi provider's `check`
 * reports it, and comparing values.
 */

export interface CheckFailure {
  property: string;
  reason: string;
}

/** The declared inputs of a kind: their names (its zod object's keys) and schemas, their check, their parse. */
export interface SpecOf<S> {
  keys: readonly string[];
  /** Each input's zod schema, by name (the kind's description is derived from them: describe.ts). */
  shape: Readonly<Record<string, z.core.$ZodType>>;
  /**
   * The provider's `check` of the known inputs among `keys`, each bad one named. Inputs still unknown (preview)
   * are checked once they are known, so failures about other inputs only are reported meanwhile.
   */
  check(news: Readonly<Record<string, unknown>>, unknown?: unknown): CheckFailure[];
  /** The spec, or a GpuRentalError naming every bad input: nothing is sent to the service for a bad spec. */
  parse(input: unknown): S;
}

/** The SpecOf a zod object (refined or not): its keys are its shape's. */
export function specOf<S extends z.ZodObject>(kind: string, schema: S): SpecOf<z.infer<S>> {
  const keys = Object.keys(schema.shape);
  return {
    keys,
    shape: schema.shape,
    check: (news, unknown) => checkInputs(schema, keys, news, unknown),
    parse: (input) => requireSpec(kind, schema, input ?? {}),
  };
}

/**
 * The inputs given that a kind does not take (`maxLifetme`), each refused naming the nearest one it takes: a
 * JavaScript program passes any name, and a name no spec reads would be dropped without a word (and with it the
 * limit the user meant). Names starting with `__` are the engine's and the shells' own (`__provider`, `__urn`).
 */
export function unknownInputs(kind: string, names: readonly string[], news: Readonly<Record<string, unknown>>): CheckFailure[] {
  const strangers = Object.keys(news).filter((k) => !k.startsWith("__") && !names.includes(k) && news[k] !== undefined && news[k] !== null);
  return strangers.map((property) => {
    const near = nearestName(property, names);
    return { property, reason: `${property} is not an input of ${kind}${near ? `: did you mean ${near}?` : `. Its inputs: ${[...names].sort().join(", ")}`}` };
  });
}

/** The values of `keys` that are set (null ones left out): what a spec is parsed from. */
export function pick(input: unknown, keys: readonly string[]): Record<string, unknown> {
  const props = (input ?? {}) as Record<string, unknown>;
  return Object.fromEntries(keys.filter((k) => props[k] !== undefined && props[k] !== null).map((k) => [k, props[k]]));
}

/** Validates a spec; each failure names the input (the first path segment) and the problem. */
export function checkSpec<S extends z.ZodType>(schema: S, spec: unknown): { spec?: z.infer<S>; failures: CheckFailure[] } {
  const parsed = schema.safeParse(spec);
  if (parsed.success) return { spec: parsed.data, failures: [] };
  return { failures: parsed.error.issues.map(failureOf) };
}

function failureOf(issue: z.core.$ZodIssue): CheckFailure {
  return { property: String(issue.path[0] ?? ""), reason: describeIssues(new z.ZodError([issue])) };
}

/** The spec, or a GpuRentalError naming every bad input: nothing is sent to the service for a bad spec. */
export function requireSpec<S extends z.ZodType>(kind: string, schema: S, input: unknown): z.infer<S> {
  const { spec, failures } = checkSpec(schema, input);
  if (!spec) throw new GpuRentalError(`Invalid ${kind}: ${failures.map((f) => f.reason).join("; ")}`);
  return spec;
}

function checkInputs<S extends z.ZodType>(schema: S, keys: readonly string[], news: Readonly<Record<string, unknown>>, unknown?: unknown): CheckFailure[] {
  // A value not known yet (preview), even deep inside an object (`{volumeId: <unknown>}`), is checked later.
  const known = Object.fromEntries(Object.entries(news).filter(([, v]) => v !== null && (unknown === undefined || !holds(v, unknown))));
  const hasUnknown = Object.keys(known).length !== Object.keys(news).filter((k) => news[k] !== null).length;
  const spec = Object.fromEntries(Object.entries(known).filter(([k]) => keys.includes(k)));
  const { failures } = checkSpec(schema, spec);
  return hasUnknown ? [...failures.filter((f) => f.property in spec), ...partlyKnownFailures(schema, keys, spec, news, unknown)] : failures;
}

/**
 * The failures of inputs known in part (filters of which one operand is not known yet) that lie in their known
 * parts (a misspelt filter field beside it): the rest waits until it is known.
 */
function partlyKnownFailures<S extends z.ZodType>(
  schema: S, keys: readonly string[], spec: Record<string, unknown>, news: Readonly<Record<string, unknown>>, unknown: unknown,
): CheckFailure[] {
  const partial = keys.filter((k) => news[k] !== unknown && news[k] !== null && news[k] !== undefined && holds(news[k], unknown));
  const parsed = partial.length ? schema.safeParse({ ...spec, ...pick(news, partial) }) : undefined;
  if (!parsed || parsed.success) return [];
  const inKnownPart = (path: readonly PropertyKey[]) => path.length > 1 && partial.includes(String(path[0])) && !holds(valueAt(news, path), unknown);
  return parsed.error.issues.filter((issue) => inKnownPart(issue.path)).map(failureOf);
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>((at, key) => (at && typeof at === "object" ? (at as Record<PropertyKey, unknown>)[key] : undefined), value);
}

/**
 * The values of `keys` (missing and null ones left out), or undefined when one of them is not known yet (preview),
 * even deep inside.
 */
export function knownValues(news: Readonly<Record<string, unknown>>, keys: readonly string[], unknown?: unknown): Record<string, unknown> | undefined {
  const values = Object.fromEntries(keys.filter((k) => news[k] !== undefined && news[k] !== null).map((k) => [k, news[k]]));
  return unknown !== undefined && Object.values(values).some((v) => holds(v, unknown)) ? undefined : values;
}

/** Equal as JSON, whatever the key order. */
export function sameValue(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** The keys of `keys` whose values differ between olds and news; an unknown new value (preview) differs. */
export function changedKeys<K extends string>(
  keys: readonly K[],
  olds: Readonly<Record<string, unknown>>,
  news: Readonly<Record<string, unknown>>,
  normalize: (key: K, value: unknown) => unknown,
  unknown?: unknown,
): K[] {
  return keys.filter((key) => (unknown !== undefined && news[key] === unknown) || !sameValue(normalize(key, olds[key]), normalize(key, news[key])));
}

/** `value`, or the default of `key` when it is missing (undefined or null): writing a default is not a change. */
export function withDefault<K extends string>(defaults: Partial<Record<K, unknown>>, key: K, value: unknown): unknown {
  return value === undefined || value === null ? defaults[key] : value;
}

/** A copy without keys whose value is undefined: gRPC cannot carry undefined in outputs. */
export function definedOnly<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Whether `value` is `marker` or holds it somewhere inside. */
function holds(value: unknown, marker: unknown): boolean {
  if (value === marker) return true;
  if (value && typeof value === "object") return Object.values(value).some((inner) => holds(inner, marker));
  return false;
}
