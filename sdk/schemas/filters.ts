import { z } from "zod";

/** A filter value as clients send it: numbers and booleans may arrive as strings. */
export const FilterScalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const filterOf = <V extends z.ZodType>(value: V) =>
  z
    .object({
      eq: value.optional(),
      neq: value.optional(),
      lt: value.optional(),
      lte: value.optional(),
      gt: value.optional(),
      gte: value.optional(),
      in: z.array(value).optional(),
      notin: z.array(value).optional(),
    })
    .strict();

/** `{<operator>: <value>}` for one field; several operators on one field combine (AND). */
export const FieldFilter = filterOf(FilterScalar);
export type FieldFilter = z.infer<typeof FieldFilter>;
export type FilterOperator = keyof FieldFilter;
export const FILTER_OPERATORS: readonly FilterOperator[] = ["eq", "neq", "lt", "lte", "gt", "gte", "in", "notin"];

export const SortDirection = z.enum(["asc", "desc"]);
/** `order`: a list of `[field, direction]` pairs, applied left to right. */
export const Order = z.array(z.tuple([z.string(), SortDirection]));
export type Order = z.infer<typeof Order>;

/**
 * How a search reads a field's filter values. `location`: a text like "Texas, US" that ends with a two-letter
 * country code; `eq`/`neq`/`in`/`notin` match the whole text or the code alone ("US").
 */
export type FieldType = "number" | "boolean" | "string" | "location";

/**
 * A number as its decimal text (`"16"`, `"0.98"`, `"-2"`): real clients send numbers so
 * (docs/service-facts.md#requests-real-clients-send). At most
 * 15 digits on each side, so the text always reads as a finite number.
 */
export const DECIMAL_TEXT = /^-?\d{1,15}(\.\d{1,15})?$/;

/** The values a filter on a field of each type accepts; `null` matches a field without a value. */
const FILTER_VALUES: Record<FieldType, z.ZodType> = {
  number: z.union([z.number(), z.string().regex(DECIMAL_TEXT)]).nullable(),
  boolean: z.union([z.boolean(), z.enum(["true", "false", "1", "0"]), z.literal(0), z.literal(1)]).nullable(),
  string: z.union([z.string(), z.number(), z.boolean()]).nullable(),
  location: z.union([z.string(), z.number(), z.boolean()]).nullable(),
};
/** Whether a filter on a field of `type` takes `value` (an operand, or one item of an `in` list) as the service reads it. */
export function filterValueFits(type: FieldType, value: unknown): boolean {
  return FILTER_VALUES[type].safeParse(value).success;
}

const TYPED_FILTERS: Record<FieldType, z.ZodType> = {
  number: filterOf(FILTER_VALUES.number),
  boolean: filterOf(FILTER_VALUES.boolean),
  string: filterOf(FILTER_VALUES.string),
  location: filterOf(FILTER_VALUES.location),
};

/**
 * The filters of a search, one typed FieldFilter per field it knows (as the service reads them): the exact
 * shape a search accepts, for the emulator to validate with and the OpenAPI document to show. A filter sent as
 * `null` is no filter.
 */
export function typedFilters(fields: Record<string, FieldType>): Record<string, z.ZodType> {
  return Object.fromEntries(Object.entries(fields).map(([field, type]) => [field, TYPED_FILTERS[type].nullable().optional()]));
}

/** A field a search can order on: one of its numeric fields (only numbers sort). */
export function sortableField(fields: Record<string, FieldType>) {
  return z.enum(Object.keys(fields).filter((field) => fields[field] === "number") as [string, ...string[]]);
}

/** `order` over the numeric fields of a search. */
export function orderOf(fields: Record<string, FieldType>) {
  return z.array(z.tuple([sortableField(fields), SortDirection]));
}
