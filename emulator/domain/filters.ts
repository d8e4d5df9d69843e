import { Comparison, CompiledFilter, compileFilters, InvalidFilter } from "../../sdk/filter-predicate";
import { FieldType } from "../../sdk/schemas";
import { badRequest } from "./errors";

export type { FieldType };

/** The default and the largest `limit` of the offer and volume offer searches. */
export const DEFAULT_LIMIT = 64;
export const MAX_LIMIT = 1000;

/**
 * Records laid out by column: each field's values in one array, built on first use and kept. A search reads a
 * few columns in tight loops instead of probing every record object field by field: over the 10,000 offers of a
 * market, several times faster. Build a table once for records that do not change (the offers of a market).
 */
export class Table<T extends object> {
  private readonly filterColumns = new Map<string, unknown[]>();
  private readonly orderColumns = new Map<string, unknown[]>();
  private readonly numberColumns = new Map<string, Float64Array | null>();
  private readonly indexes = new Map<string, Map<unknown, number[]>>();
  private views?: Record<string, unknown>[];
  private every?: Int32Array;

  /** `filterView`: the record as filters see it, when that differs (a derived field such as a duration). */
  constructor(
    readonly rows: readonly T[],
    private readonly filterView?: (record: T) => Record<string, unknown>,
  ) {}

  /** Every row index, in order, in an array of its own to narrow down. */
  allRows(): Int32Array {
    if (!this.every) {
      this.every = new Int32Array(this.rows.length);
      for (let row = 0; row < this.rows.length; row++) this.every[row] = row;
    }
    return this.every.slice();
  }

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

  /**
   * A column of numbers (as filters see them, or as the records have them) as a Float64Array, a missing value
   * (null, absent) as NaN, which no comparison passes; null when the column holds anything else.
   */
  numbers(field: string, seen: "filter" | "order"): Float64Array | null {
    return cached(this.numberColumns, `${seen}:${field}`, () => {
      const values = seen === "filter" ? this.filterColumn(field) : this.orderColumn(field);
      const numbers = new Float64Array(values.length);
      for (let row = 0; row < values.length; row++) {
        const value = values[row];
        if (typeof value === "number") numbers[row] = value;
        else if (value === null || value === undefined) numbers[row] = NaN;
        else return null;
      }
      return numbers;
    });
  }
}

function cached<V>(map: Map<string, V>, key: string, build: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = build()));
  return value;
}

/**
 * The rows an exact-match filter (`eq`, `in`) allows, looked up in the field's index: the narrowest such
 * filter, so a search by GPU model reads a few thousand offers, not all of them. Undefined when no filter can
 * use an index (then every row is read). In table order for one value; for several, list after list.
 */
function indexedCandidates<T extends object>(
  table: Table<T>,
  compiled: CompiledFilter[],
  excluded: Uint8Array | undefined,
): { rows: Int32Array; count: number; by: CompiledFilter; inTableOrder: boolean } | undefined {
  let best: { lists: number[][]; by: CompiledFilter } | undefined;
  let size = Infinity;
  for (const filter of compiled) {
    if (!filter.oneOf) continue;
    const index = table.index(filter.field);
    const lists = filter.oneOf.map((value) => index.get(value) ?? []);
    const count = lists.reduce((sum, rows) => sum + rows.length, 0);
    if (count < size) [best, size] = [{ lists, by: filter }, count];
  }
  if (!best) return undefined;
  const rows = new Int32Array(size);
  let at = 0;
  for (const list of best.lists) {
    if (excluded) for (const row of list) if (excluded[row] === 0) rows[at++] = row;
    if (!excluded) for (const row of list) rows[at++] = row;
  }
  return { rows, count: at, by: best.by, inTableOrder: best.lists.filter((list) => list.length).length <= 1 };
}

/**
 * Keeps, in `rows[0..count)`, the rows that pass `filter` (in their order), and says how many. A comparison of
 * numbers runs over the field's Float64Array (keepComparing); anything else calls the filter's test.
 */
function keepPassing<T extends object>(table: Table<T>, filter: CompiledFilter, rows: Int32Array, count: number): number {
  const numbers = filter.compare && table.numbers(filter.field, "filter");
  if (numbers && filter.compare) return keepComparing(numbers, filter.compare.op, filter.compare.target, rows, count);
  const column = table.filterColumn(filter.field);
  const test = filter.test;
  let kept = 0;
  for (let i = 0; i < count; i++) {
    const row = rows[i];
    if (test(column[row])) rows[kept++] = row;
  }
  return kept;
}

/**
 * `keepPassing` for a comparison of numbers: one loop per operator, so the loop itself does nothing but compare.
 * NaN (no value) passes no comparison, and is not equal to any number: it passes `neq`, as null does.
 */
function keepComparing(numbers: Float64Array, op: Comparison, target: number, rows: Int32Array, count: number): number {
  let kept = 0;
  switch (op) {
    case "gte":
      for (let i = 0; i < count; i++) if (numbers[rows[i]] >= target) rows[kept++] = rows[i];
      break;
    case "lte":
      for (let i = 0; i < count; i++) if (numbers[rows[i]] <= target) rows[kept++] = rows[i];
      break;
    case "gt":
      for (let i = 0; i < count; i++) if (numbers[rows[i]] > target) rows[kept++] = rows[i];
      break;
    case "lt":
      for (let i = 0; i < count; i++) if (numbers[rows[i]] < target) rows[kept++] = rows[i];
      break;
    case "eq":
      for (let i = 0; i < count; i++) if (numbers[rows[i]] === target) rows[kept++] = rows[i];
      break;
    case "neq":
      for (let i = 0; i < count; i++) if (numbers[rows[i]] !== target) rows[kept++] = rows[i];
      break;
  }
  return kept;
}

/**
 * The first `limit` of `rows` by `[field, direction]` pairs; nulls last in either direction; ties in table
 * order. Only numeric fields sort. One key (the common case) runs over the field's numbers, keeping the best
 * `limit` in one pass; several keys compare row by row.
 */
function firstRows<T extends object>(
  rows: Int32Array,
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
  const numbers = order.length === 1 ? table.numbers(order[0][0], "order") : null;
  if (numbers) return bestByNumber(rows, numbers, order[0][1] === "asc" ? 1 : -1, limit);
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
  return [...rows].sort(compare).slice(0, limit);
}

/**
 * The `limit` rows with the smallest `sign × value` (no value: last), ties by row, best first. The best so far
 * are a max-heap (the worst of them on top), so a row that beats it costs a few swaps, not a shift of them all.
 */
function bestByNumber(rows: Int32Array, numbers: Float64Array, sign: number, limit: number): number[] {
  if (limit <= 0) return [];
  const heapRows = new Int32Array(limit);
  const heapKeys = new Float64Array(limit);
  // Whether (key a, row a) comes after (key b, row b).
  const after = (ka: number, ra: number, kb: number, rb: number) => ka > kb || (ka === kb && ra > rb);
  let size = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    const value = numbers[row];
    const key = value !== value ? Infinity : sign * value;
    if (size < limit) {
      // Sift up from the end.
      let at = size++;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if (!after(key, row, heapKeys[parent], heapRows[parent])) break;
        heapKeys[at] = heapKeys[parent];
        heapRows[at] = heapRows[parent];
        at = parent;
      }
      heapKeys[at] = key;
      heapRows[at] = row;
    } else if (after(heapKeys[0], heapRows[0], key, row)) {
      // Replace the worst kept, and sift down.
      let at = 0;
      for (;;) {
        const left = 2 * at + 1;
        if (left >= size) break;
        const right = left + 1;
        const larger = right < size && after(heapKeys[right], heapRows[right], heapKeys[left], heapRows[left]) ? right : left;
        if (!after(heapKeys[larger], heapRows[larger], key, row)) break;
        heapKeys[at] = heapKeys[larger];
        heapRows[at] = heapRows[larger];
        at = larger;
      }
      heapKeys[at] = key;
      heapRows[at] = row;
    }
  }
  const kept = Array.from({ length: size }, (_, i) => i);
  kept.sort((a, b) => (after(heapKeys[a], heapRows[a], heapKeys[b], heapRows[b]) ? 1 : -1));
  return kept.map((i) => heapRows[i]);
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

/** The filters compiled by the SDK's predicate (the one reading of filters); one it refuses is `invalid_args`. */
function compileForSearch(filters: Record<string, unknown>, fields: Record<string, FieldType>): CompiledFilter[] {
  try {
    return compileFilters(filters, fields);
  } catch (error) {
    if (error instanceof InvalidFilter) throw badRequest("invalid_args", error.message);
    throw error;
  }
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
  /** Rows of the table to leave out whatever the filters say (an offer rented): 1 at the row's index. */
  excluded?: Uint8Array;
}

/**
 * Runs one search: the single filter mechanism behind offers, volume offers, templates, instances and billing.
 * The rows an index allows (or all), narrowed filter by filter in place, then ordered and cut to `limit`.
 */
export function search<T extends object>(
  records: Iterable<T> | Table<T>,
  query: SearchQuery,
  fields: Record<string, FieldType>,
  options: SearchOptions<T>,
): T[] {
  const table = records instanceof Table ? records : new Table([...records], options.filterView);
  const compiled = compileForSearch(query.filters, fields);
  // The rows an index allows (or all), without those left out whatever the filters say.
  const indexed = indexedCandidates(table, compiled, options.excluded);
  const rows = indexed?.rows ?? table.allRows();
  let count = indexed?.count ?? rows.length;
  if (!indexed && options.excluded) {
    const excluded = options.excluded;
    let kept = 0;
    for (let i = 0; i < count; i++) if (excluded[rows[i]] === 0) rows[kept++] = rows[i];
    count = kept;
  }
  // The index has applied its filter already.
  for (const filter of compiled) if (filter !== indexed?.by) count = keepPassing(table, filter, rows, count);
  const found = rows.subarray(0, count);
  const limit = Math.min(query.limit ?? options.defaultLimit, options.maxLimit);
  if (query.order?.length) return firstRows(found, query.order, limit, fields, table).map((row) => table.rows[row]);
  // Without an order, the first rows in table order (an index of several values lists them value by value).
  const first = Array.from((indexed && !indexed.inTableOrder ? found.sort() : found).subarray(0, limit));
  return first.map((row) => table.rows[row]);
}
