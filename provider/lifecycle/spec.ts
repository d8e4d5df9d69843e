import { z } from "zod";
import { GpuRentalClient } from "../client";
import { GpuRentalError, NotFoundError } from "../errors";
export { foundOrNull } from "../errors";
import { canonicalJson, describeIssues } from "../schemas";

/**
 * What the resources share: checking a declared spec with its zod schema the way the Pulumi provider's `check`
 * reports it, comparing values, and the options every resource function takes.
 */

export interface CheckFailure {
  property: string;
  reason: string;
}

/** The options every resource function takes: the client to use (tests pass one bound to an emulator). */
export interface WithClient {
  client?: GpuRentalClient;
}

/** The client of the options, or one from the configured connection (stack config or environment). */
export function clientOf(options: WithClient): GpuRentalClient {
  return options.client ?? new GpuRentalClient();
}

/** Validates a spec; each failure names the input (the first path segment) and the problem. */
export function checkSpec<S extends z.ZodType>(schema: S, spec: unknown): { spec?: z.infer<S>; failures: CheckFailure[] } {
  const parsed = schema.safeParse(spec);
  if (parsed.success) return { spec: parsed.data, failures: [] };
  return {
    failures: parsed.error.issues.map((issue) => ({
      property: String(issue.path[0] ?? ""),
      reason: describeIssues(new z.ZodError([issue])),
    })),
  };
}

/** The spec, or a GpuRentalError naming every bad input: nothing is sent to the service for a bad spec. */
export function requireSpec<S extends z.ZodType>(kind: string, schema: S, input: unknown): z.infer<S> {
  const { spec, failures } = checkSpec(schema, input);
  if (!spec) throw new GpuRentalError(`Invalid ${kind}: ${failures.map((f) => f.reason).join("; ")}`);
  return spec;
}

/**
 * The provider's `check`: validates the known inputs among `keys` and names each bad one. Inputs still unknown
 * (preview) are checked once they are known, so failures about other inputs only are reported meanwhile.
 */
export function checkInputs<S extends z.ZodType>(
  schema: S,
  keys: readonly string[],
  news: Record<string, unknown>,
  unknown?: unknown,
): { inputs: Record<string, unknown>; failures: CheckFailure[] } {
  // A value not known yet (preview), even deep inside an object (`{volumeId: <unknown>}`), is checked later.
  const known = Object.fromEntries(Object.entries(news).filter(([, v]) => v !== null && (unknown === undefined || !holds(v, unknown))));
  const hasUnknown = Object.keys(known).length !== Object.keys(news).filter((k) => news[k] !== null).length;
  const spec = Object.fromEntries(Object.entries(known).filter(([k]) => keys.includes(k)));
  const { failures } = checkSpec(schema, spec);
  return { inputs: news, failures: hasUnknown ? failures.filter((f) => f.property in spec) : failures };
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

/** Runs a deletion; a thing already gone counts as deleted. */
export async function deletedOrGone(remove: () => Promise<void>): Promise<void> {
  try {
    await remove();
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
}

/** Whether `value` is `marker` or holds it somewhere inside. */
function holds(value: unknown, marker: unknown): boolean {
  if (value === marker) return true;
  if (value && typeof value === "object") return Object.values(value).some((inner) => holds(inner, marker));
  return false;
}
