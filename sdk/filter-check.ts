import { z } from "zod";
import { nearestName } from "./nearest-name";
import { FieldFilter, FieldType, FILTER_OPERATORS, filterValueFits, OFFER_FILTER_FIELDS } from "./schemas";

/**
 * The check of search filters (`{field: {operator: value}}`) that a program declares, before anything is sent:
 * the service ignores a filter on a field it does not know (and rents without the constraint the user wrote),
 * and refuses an operand it cannot read only when the search runs. Every declared filter (an Instance's or a
 * fleet's `filters`, a template's `extraFilters`, a lookup's) is checked here, against the table of the fields
 * its search knows (OFFER_FILTER_FIELDS for offers). Each problem names its place and says what is expected; a
 * value given is never quoted (it may be a secret).
 */

export interface FilterProblem {
  /** Where, below the filters: `[field]`, `[field, operator]`, `[field, operator, index]`. */
  path: (string | number)[];
  message: string;
}

const OPERATORS = FILTER_OPERATORS.join(", ");

/**
 * What a declared program may write for each type: what the service reads (a number as its decimal text too, as
 * stack config gives it; a flag as `"true"` or `1`), said in the refusal.
 */
const TAKES: Record<FieldType, string> = {
  number: 'a number (or its decimal text, "0.99", as stack config gives it)',
  boolean: 'true or false (or "true"/"false", 1/0)',
  string: "text",
  location: 'text: a place as offers show it ("Texas, US") or its two-letter country code ("US")',
};

/** Every problem of `filters` against the fields of a search (`fields`, with their types). */
export function filterProblems(filters: Readonly<Record<string, unknown>>, fields: Readonly<Record<string, FieldType>>): FilterProblem[] {
  return Object.entries(filters).flatMap(([field, filter]) => {
    const type = Object.hasOwn(fields, field) ? fields[field] : undefined;
    if (!type) return [{ path: [field], message: unknownField(field, fields) }];
    // Null is no filter, as the service reads it.
    if (filter === null || filter === undefined) return [];
    if (typeof filter !== "object" || Array.isArray(filter)) {
      return [{ path: [field], message: `expected an object of operators (${OPERATORS}), e.g. { eq: ... }` }];
    }
    return Object.entries(filter).flatMap(([operator, value]) => operandProblems(field, type, operator, value));
  });
}

function unknownField(field: string, fields: Readonly<Record<string, FieldType>>): string {
  const known = Object.keys(fields);
  const near = nearestName(field, known);
  const why = "not a field the search filters on (the service would ignore it, and rent without it)";
  return near ? `${why}: did you mean ${near}?` : `${why}. Its fields: ${[...known].sort().join(", ")}`;
}

function operandProblems(field: string, type: FieldType, operator: string, value: unknown): FilterProblem[] {
  if (!(FILTER_OPERATORS as readonly string[]).includes(operator)) {
    const near = nearestName(operator, FILTER_OPERATORS);
    return [{ path: [field, operator], message: `not an operator${near ? `: did you mean ${near}?` : ""} (operators: ${OPERATORS})` }];
  }
  if (value === undefined) return [];
  const takes = `${field} takes ${TAKES[type]}`;
  if (operator !== "in" && operator !== "notin") return filterValueFits(type, value) ? [] : [{ path: [field, operator], message: takes }];
  if (!Array.isArray(value)) return [{ path: [field, operator], message: `expected a list of values (${takes})` }];
  return value.flatMap((item, index) => (filterValueFits(type, item) ? [] : [{ path: [field, operator, index], message: takes }]));
}

/** The zod type of declared filters over the fields of a search: every filterProblem is an issue at its place. */
export function checkedFilters(fields: Readonly<Record<string, FieldType>>): z.ZodType<Record<string, FieldFilter>> {
  const schema = z.record(z.string(), z.unknown()).superRefine((filters, ctx) => {
    for (const { path, message } of filterProblems(filters, fields)) ctx.addIssue({ code: "custom", path, message });
  });
  return schema as unknown as z.ZodType<Record<string, FieldFilter>>;
}

/** Declared offer-search filters: an Instance's, a fleet's, a template's defaults, an offer lookup's. */
export const OfferFiltersInput = checkedFilters(OFFER_FILTER_FIELDS);
