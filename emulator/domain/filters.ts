import { FieldFilter, FILTER_OPERATORS } from "../../sdk/schemas";
import { badRequest } from "./errors";

export type FieldType = "number" | "boolean" | "string";
type Scalar = string | number | boolean | null;

/** A filter made ready to run: values coerced to the field's type once, not per offer. */
export interface CompiledFilter {
  field: string;
  test: (value: unknown) => boolean;
}

/**
 * Compiles `{field: {op: value}}` filters against a table of known fields. Values sent as strings are coerced
 * by the field's type (`"1"` for a number, `"true"` for a boolean); several operators on one field all apply;
 * fields the table does not know are ignored, as the live service ignores them.
 */
export function compileFilters(filters: Record<string, unknown>, fields: Record<string, FieldType>): CompiledFilter[] {
  const compiled: CompiledFilter[] = [];
  for (const [field, spec] of Object.entries(filters)) {
    // Own keys only: a filter on `constructor` or `__proto__` is an unknown field like any other.
    const type = Object.hasOwn(fields, field) ? fields[field] : undefined;
    if (!type) continue;
    const parsed = FieldFilter.safeParse(spec);
    if (!parsed.success) {
      throw badRequest(
        "invalid_args",
        `filter ${field}: expected an object of operators (${FILTER_OPERATORS.join(", ")}), got ${JSON.stringify(spec)}`,
      );
    }
    for (const [op, raw] of Object.entries(parsed.data)) {
      if (raw === undefined) continue;
      compiled.push({ field, test: predicate(field, type, op as keyof FieldFilter, raw) });
    }
  }
  return compiled;
}

export function matches(record: Record<string, unknown>, filters: CompiledFilter[]): boolean {
  return filters.every((f) => f.test(record[f.field]));
}

function predicate(field: string, type: FieldType, op: keyof FieldFilter, raw: Scalar | Scalar[]): (v: unknown) => boolean {
  if (op === "in" || op === "notin") {
    const set = new Set((raw as Scalar[]).map((x) => coerce(field, type, x)));
    return op === "in" ? (v) => set.has(v as Scalar) : (v) => !set.has(v as Scalar);
  }
  const target = coerce(field, type, raw as Scalar);
  switch (op) {
    case "eq":
      return (v) => v === target;
    case "neq":
      return (v) => v !== target;
    case "lt":
      return (v) => v !== null && v !== undefined && target !== null && (v as number) < (target as number);
    case "lte":
      return (v) => v !== null && v !== undefined && target !== null && (v as number) <= (target as number);
    case "gt":
      return (v) => v !== null && v !== undefined && target !== null && (v as number) > (target as number);
    case "gte":
      return (v) => v !== null && v !== undefined && target !== null && (v as number) >= (target as number);
  }
}

function coerce(field: string, type: FieldType, value: Scalar): Scalar {
  if (value === null) return null;
  if (type === "number") {
    const n = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : NaN;
    if (Number.isNaN(n)) throw badRequest("invalid_args", `filter ${field}: ${JSON.stringify(value)} is not a number`);
    return n;
  }
  if (type === "boolean") {
    if (typeof value === "boolean") return value;
    if (value === "true" || value === 1 || value === "1") return true;
    if (value === "false" || value === 0 || value === "0") return false;
    throw badRequest("invalid_args", `filter ${field}: ${JSON.stringify(value)} is not a boolean`);
  }
  return String(value);
}

/** Sorts by `[field, direction]` pairs; nulls last in either direction. Unknown or non-numeric fields are refused. */
export function compareBy<T extends Record<string, unknown>>(
  order: [string, "asc" | "desc"][],
  fields: Record<string, FieldType>,
): (a: T, b: T) => number {
  for (const [field] of order) {
    if (fields[field] !== "number") {
      throw badRequest("invalid_args", `order: ${field} is not a numeric field of this search`);
    }
  }
  return (a, b) => {
    for (const [field, direction] of order) {
      const x = a[field] as number | null;
      const y = b[field] as number | null;
      if (x === y) continue;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return direction === "asc" ? x - y : y - x;
    }
    return 0;
  };
}

/** A search as the three searches of the service share it: field filters, then `order`, then `limit`. */
export interface SearchQuery {
  filters: Record<string, unknown>;
  order?: [string, "asc" | "desc"][];
  limit?: number;
}

export interface SearchOptions<T> {
  defaultLimit: number;
  maxLimit: number;
  /**
   * The record as filters see it, when that differs from what the search returns (e.g. a country code for a
   * location the record spells out in full). Ordering and the result use the record itself.
   */
  filterView?: (record: T) => Record<string, unknown>;
}

/** Runs one search over `records`: the single filter mechanism behind offers, volume offers and templates. */
export function search<T extends object>(
  records: Iterable<T>,
  query: SearchQuery,
  fields: Record<string, FieldType>,
  options: SearchOptions<T>,
): T[] {
  const compiled = compileFilters(query.filters, fields);
  const sort = query.order?.length ? (compareBy(query.order, fields) as (a: T, b: T) => number) : undefined;
  const found: T[] = [];
  for (const record of records) {
    const seen = options.filterView ? options.filterView(record) : (record as Record<string, unknown>);
    if (matches(seen, compiled)) found.push(record);
  }
  if (sort) found.sort(sort);
  return found.slice(0, Math.min(query.limit ?? options.defaultLimit, options.maxLimit));
}
