import { FieldFilter, FieldType, FILTER_OPERATORS } from "../../sdk/schemas";
import { badRequest } from "./errors";

export type { FieldType };
type Scalar = string | number | boolean | null;

/** The default and the largest `limit` of the offer and volume offer searches. */
export const DEFAULT_LIMIT = 64;
export const MAX_LIMIT = 1000;

/** "Texas, US" → "US"; a bare code stays as it is. */
export function countryCode(location: string): string {
  return location.split(",").pop()!.trim();
}

/** A filter made ready to run: values coerced to the field's type once, not per offer. */
export interface CompiledFilter {
  field: string;
  test: (value: unknown) => boolean;
  /** For `eq` and `in` on exact-match fields: the values wanted, so a search can look them up in an index. */
  oneOf?: Scalar[];
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
    // A filter sent as null is no filter (real clients send null for what the user left unset).
    if (!type || spec === null || spec === undefined) continue;
    const parsed = FieldFilter.safeParse(spec);
    if (!parsed.success) {
      throw badRequest(
        "invalid_args",
        `filter ${field}: expected an object of operators (${FILTER_OPERATORS.join(", ")}), got ${JSON.stringify(spec)}`,
      );
    }
    for (const [op, raw] of Object.entries(parsed.data)) {
      if (raw === undefined) continue;
      const exact = type !== "location" && (op === "eq" || op === "in");
      const oneOf = exact ? [...new Set((Array.isArray(raw) ? raw : [raw]).map((value) => coerce(field, type, value)))] : undefined;
      compiled.push({ field, test: predicate(field, type, op as keyof FieldFilter, raw), oneOf });
    }
  }
  return compiled;
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
  switch (op) {
    case "eq":
      return (v) => matches(v, equal);
    case "neq":
      return (v) => !matches(v, equal);
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

/**
 * Records laid out by column: each field's values in one array, built on first use and kept. A search reads a
 * few columns in tight loops instead of probing every record object field by field: over the 10,000 offers of a
 * market, several times faster. Build a table once for records that do not change (the offers of a market).
 */
export class Table<T extends object> {
  private readonly filterColumns = new Map<string, unknown[]>();
  private readonly orderColumns = new Map<string, unknown[]>();
  private readonly indexes = new Map<string, Map<unknown, number[]>>();
  private views?: Record<string, unknown>[];

  /** `filterView`: the record as filters see it, when that differs (a derived field such as a duration). */
  constructor(
    readonly rows: readonly T[],
    private readonly filterView?: (record: T) => Record<string, unknown>,
  ) {}

  /** A field's values as filters see them. */
  filterColumn(field: string): unknown[] {
    if (!this.filterView) return this.orderColumn(field);
    this.views ??= this.rows.map(this.filterView);
    return cached(this.filterColumns, field, () => this.views!.map((view) => view[field]));
  }

  /** The rows holding each value of a field (as filters see it), in table order. */
  index(field: string): Map<unknown, number[]> {
    return cached(this.indexes, field, () => {
      const index = new Map<unknown, number[]>();
      this.filterColumn(field).forEach((value, row) => {
        const rows = index.get(value);
        if (rows) rows.push(row);
        else index.set(value, [row]);
      });
      return index;
    });
  }

  /** A field's values in the records themselves (ordering and results use the record). */
  orderColumn(field: string): unknown[] {
    return cached(this.orderColumns, field, () => this.rows.map((row) => (row as Record<string, unknown>)[field]));
  }
}

function cached<V>(map: Map<string, V>, key: string, build: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = build()));
  return value;
}

/**
 * The rows an exact-match filter (`eq`, `in`) allows, looked up in the field's index, in table order: the
 * narrowest such filter, so a search by GPU model reads a few thousand offers, not all of them. Undefined when no
 * filter can use an index (then every row is read).
 */
function indexedCandidates<T extends object>(table: Table<T>, compiled: CompiledFilter[]): Int32Array | undefined {
  let best: number[][] | undefined;
  let size = Infinity;
  for (const filter of compiled) {
    if (!filter.oneOf) continue;
    const index = table.index(filter.field);
    const lists = filter.oneOf.map((value) => index.get(value) ?? []);
    const count = lists.reduce((sum, rows) => sum + rows.length, 0);
    if (count < size) [best, size] = [lists, count];
  }
  if (!best) return undefined;
  const rows = new Int32Array(size);
  let at = 0;
  for (const list of best) for (const row of list) rows[at++] = row;
  return best.length > 1 ? rows.sort() : rows;
}

/**
 * The first `limit` row indices by `[field, direction]` pairs; nulls last in either direction; ties in table
 * order. Only numeric fields sort. When few rows are wanted out of many (64 of thousands of offers), they are
 * picked in one pass instead of sorting everything.
 */
function firstRows<T extends object>(
  rows: number[],
  order: [string, "asc" | "desc"][],
  limit: number,
  fields: Record<string, FieldType>,
  table: Table<T>,
): number[] {
  for (const [field] of order) {
    if (!Object.hasOwn(fields, field) || fields[field] !== "number") {
      throw badRequest("invalid_args", `order: ${field} is not a numeric field of this search`);
    }
  }
  const keys = order.map(([field, direction]) => ({ column: table.orderColumn(field) as (number | null)[], sign: direction === "asc" ? 1 : -1 }));
  const compare = (a: number, b: number) => {
    for (const { column, sign } of keys) {
      const x = column[a];
      const y = column[b];
      if (x === y) continue;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return sign * (x - y);
    }
    return a - b;
  };
  if (rows.length <= limit * 4) return rows.sort(compare).slice(0, limit);
  const best: number[] = [];
  for (const row of rows) {
    if (best.length === limit && compare(row, best[limit - 1]) >= 0) continue;
    let low = 0;
    let high = best.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (compare(best[middle], row) < 0) low = middle + 1;
      else high = middle;
    }
    best.splice(low, 0, row);
    if (best.length > limit) best.pop();
  }
  return best;
}

/**
 * The filters with `field` held to at least `minimum` (`allocated_storage`: offers with less room than wanted are
 * left out): a `gte` already given stays when it asks for more.
 */
export function atLeast(filters: Record<string, unknown>, field: string, minimum: number | undefined): Record<string, unknown> {
  if (minimum === undefined) return filters;
  const given = (filters[field] ?? {}) as Record<string, unknown>;
  const current = given.gte === null || given.gte === undefined || given.gte === "" ? NaN : Number(given.gte);
  return { ...filters, [field]: { ...given, gte: Number.isFinite(current) ? Math.max(current, minimum) : minimum } };
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
  /** For records given as a list: the record as filters see it (see Table). */
  filterView?: (record: T) => Record<string, unknown>;
  /** A last check on a record that passed the filters (e.g. not rented): cheap, as few records get there. */
  include?: (record: T) => boolean;
}

/** Runs one search: the single filter mechanism behind offers, volume offers and templates. */
export function search<T extends object>(
  records: Iterable<T> | Table<T>,
  query: SearchQuery,
  fields: Record<string, FieldType>,
  options: SearchOptions<T>,
): T[] {
  const table = records instanceof Table ? records : new Table([...records], options.filterView);
  const compiled = compileFilters(query.filters, fields);
  const columns = compiled.map((filter) => table.filterColumn(filter.field));
  const found: number[] = [];
  const check = (row: number) => {
    for (let k = 0; k < compiled.length; k++) if (!compiled[k].test(columns[k][row])) return;
    if (options.include && !options.include(table.rows[row])) return;
    found.push(row);
  };
  const candidates = indexedCandidates(table, compiled);
  if (candidates) candidates.forEach(check);
  else for (let row = 0; row < table.rows.length; row++) check(row);
  const limit = Math.min(query.limit ?? options.defaultLimit, options.maxLimit);
  const first = query.order?.length ? firstRows(found, query.order, limit, fields, table) : found.slice(0, limit);
  return first.map((row) => table.rows[row]);
}
