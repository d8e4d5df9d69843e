import { FieldFilter, FieldType, FILTER_OPERATORS, OFFER_FILTER_FIELDS } from "./schemas";

/**
 * The one reading of search filters (`{field: {op: value}}`), as the live service reads them: the emulator's
 * searches run it, and the SDK asks it whether an offer rented still meets new criteria, so the two cannot
 * disagree. Rules: a value sent as text is taken in the field's type (`"16"` for a number, `"true"`/`"1"`/`1`
 * for a boolean, anything as text for a text field); several operators on one field all apply; a location
 * ("Texas, US") matches its whole text or its country code; a filter on a field the search does not know, or sent
 * as null, is no filter; a value that cannot be read in the field's type is refused (InvalidFilter).
 */

type Scalar = string | number | boolean | null;
export type Comparison = "eq" | "neq" | "lt" | "lte" | "gt" | "gte";

/** A filter the service would refuse (`invalid_args`): the message names the field and the value. */
export class InvalidFilter extends Error {
  override readonly name = "InvalidFilter";
}

/** "Texas, US" → "US"; a bare code stays as it is. */
function countryCode(location: string): string {
  return location.split(",").pop()!.trim();
}

/** A filter made ready to run: values read in the field's type once, not per record. */
export interface CompiledFilter {
  field: string;
  test: (value: unknown) => boolean;
  /** For `eq` and `in` on exact-match fields: the values wanted, so a search can look them up in an index. */
  oneOf?: Scalar[];
  /** A number field compared with a number: a search can run it over the field's numbers in one tight loop. */
  compare?: { op: Comparison; target: number };
}

/** Compiles filters against a table of the fields a search knows, with their types (see the rules above). */
export function compileFilters(filters: Readonly<Record<string, unknown>>, fields: Readonly<Record<string, FieldType>>): CompiledFilter[] {
  const compiled: CompiledFilter[] = [];
  for (const [field, spec] of Object.entries(filters)) {
    // Own keys only: a filter on `constructor` or `__proto__` is an unknown field like any other.
    const type = Object.hasOwn(fields, field) ? fields[field] : undefined;
    // A filter sent as null is no filter (real clients send null for what the user left unset).
    if (!type || spec === null || spec === undefined) continue;
    if (!isFieldFilter(spec)) {
      throw new InvalidFilter(`filter ${field}: expected an object of operators (${FILTER_OPERATORS.join(", ")}), got ${JSON.stringify(spec)}`);
    }
    for (const [op, raw] of Object.entries(spec)) {
      if (raw === undefined) continue;
      const exact = type !== "location" && (op === "eq" || op === "in");
      const oneOf = exact ? [...new Set((Array.isArray(raw) ? raw : [raw]).map((value) => coerce(field, type, value)))] : undefined;
      const target = type === "number" && !Array.isArray(raw) ? coerce(field, type, raw) : null;
      const compare = typeof target === "number" && op !== "in" && op !== "notin" ? { op: op as Comparison, target } : undefined;
      compiled.push({ field, test: predicate(field, type, op as keyof FieldFilter, raw), oneOf, compare });
    }
  }
  return compiled;
}

/** Whether one record (as the service returns it) passes every filter; throws InvalidFilter as compileFilters. */
export function matchesFilters(
  record: Readonly<Record<string, unknown>>,
  filters: Readonly<Record<string, unknown>>,
  fields: Readonly<Record<string, FieldType>>,
): boolean {
  return compileFilters(filters, fields).every((filter) => filter.test(record[filter.field]));
}

/**
 * Whether an offer, as an offer search returned it, is one the search `filters` would find. Filters the service
 * would refuse are met by no offer. Every field a declared filter may name counts, the vendor's documented ones
 * too: an offer without the field (`cpu_arch` of an offer the emulator made) meets only `neq` and `notin` on it.
 */
export function offerMatches(offer: Readonly<Record<string, unknown>>, filters: Readonly<Record<string, unknown>>): boolean {
  try {
    return matchesFilters(offer, filters, OFFER_FILTER_FIELDS);
  } catch (error) {
    if (error instanceof InvalidFilter) return false;
    throw error;
  }
}

/**
 * Whether `spec` is a FieldFilter: operators only, a scalar for each comparison, a list of scalars for `in`
 * and `notin`. (The emulator's HTTP layer has checked bodies with the typed filter schemas already; filters
 * given directly are checked here, without a schema's cost on every search.)
 */
function isFieldFilter(spec: unknown): spec is FieldFilter {
  if (typeof spec !== "object" || spec === null || Array.isArray(spec)) return false;
  const scalar = (value: unknown) => value === null || ["string", "number", "boolean"].includes(typeof value);
  return Object.entries(spec).every(([op, value]) => {
    if (!(FILTER_OPERATORS as readonly string[]).includes(op)) return false;
    if (value === undefined) return true;
    return op === "in" || op === "notin" ? Array.isArray(value) && value.every(scalar) : scalar(value);
  });
}

function predicate(field: string, type: FieldType, op: keyof FieldFilter, raw: Scalar | Scalar[]): (v: unknown) => boolean {
  // A location is its whole text and its country code: it matches a value equal to either.
  const matches =
    type === "location"
      ? (v: unknown, wanted: (x: Scalar) => boolean) => wanted(v as Scalar) || (typeof v === "string" && wanted(countryCode(v)))
      : (v: unknown, wanted: (x: Scalar) => boolean) => wanted(v as Scalar);
  if (op === "in" || op === "notin") {
    const set = new Set((raw as Scalar[]).map((x) => coerce(field, type, x)));
    const has = (x: Scalar) => set.has(x);
    return op === "in" ? (v) => matches(v, has) : (v) => !matches(v, has);
  }
  const target = coerce(field, type, raw as Scalar);
  const equal = (x: Scalar) => x === target;
  // An ordering never holds for a record without a value, nor against null.
  const ordered = (v: unknown) => v !== null && v !== undefined && target !== null;
  switch (op) {
    case "eq":
      return (v) => matches(v, equal);
    case "neq":
      return (v) => !matches(v, equal);
    case "lt":
      return (v) => ordered(v) && (v as number) < (target as number);
    case "lte":
      return (v) => ordered(v) && (v as number) <= (target as number);
    case "gt":
      return (v) => ordered(v) && (v as number) > (target as number);
    case "gte":
      return (v) => ordered(v) && (v as number) >= (target as number);
  }
}

function coerce(field: string, type: FieldType, value: Scalar): Scalar {
  if (value === null) return null;
  if (type === "number") {
    const n = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : NaN;
    if (Number.isNaN(n)) throw new InvalidFilter(`filter ${field}: ${JSON.stringify(value)} is not a number`);
    return n;
  }
  if (type === "boolean") {
    if (typeof value === "boolean") return value;
    if (value === "true" || value === 1 || value === "1") return true;
    if (value === "false" || value === 0 || value === "0") return false;
    throw new InvalidFilter(`filter ${field}: ${JSON.stringify(value)} is not a boolean`);
  }
  return String(value);
}
