import { z } from "zod";

/** A filter value as clients send it: numbers and booleans may arrive as strings. */
export const FilterScalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** `{<operator>: <value>}` for one field; several operators on one field combine (AND). */
export const FieldFilter = z
  .object({
    eq: FilterScalar.optional(),
    neq: FilterScalar.optional(),
    lt: FilterScalar.optional(),
    lte: FilterScalar.optional(),
    gt: FilterScalar.optional(),
    gte: FilterScalar.optional(),
    in: z.array(FilterScalar).optional(),
    notin: z.array(FilterScalar).optional(),
  })
  .strict();
export type FieldFilter = z.infer<typeof FieldFilter>;
export type FilterOperator = keyof FieldFilter;
export const FILTER_OPERATORS: readonly FilterOperator[] = ["eq", "neq", "lt", "lte", "gt", "gte", "in", "notin"];

export const SortDirection = z.enum(["asc", "desc"]);
/** `order`: a list of `[field, direction]` pairs, applied left to right. */
export const Order = z.array(z.tuple([z.string(), SortDirection]));
export type Order = z.infer<typeof Order>;
