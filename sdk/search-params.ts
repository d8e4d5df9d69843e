import type { OfferFilters } from "./offer-filters";

/**
 * Offer criteria as the service's CLI writes them in a worker group's `search_params`
 * (`gpu_name=RTX_4090 num_gpus>=1 verified=True`): space-separated `field<op>value` terms, `op` one of
 * `= == != < <= > >=`, or `field in [a,b]` / `field notin [a,b]`. An underscore in a GPU name stands for its space.
 */

const OPERATORS: Record<string, string> = { "=": "eq", "==": "eq", "!=": "neq", "<": "lt", "<=": "lte", ">": "gt", ">=": "gte", in: "in", notin: "notin" };
/** One term: a field, an operator, a value or a list. (A pattern, not shared: each parse makes its own, as it keeps its place.) */
const TERM_SOURCE = String.raw`([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|!=|==|=|<|>|\s+notin\s+|\s+in\s+)\s*(\[[^\]]*\]|[^\s\][<>=!]+)(?=\s|$)`;

/** Thrown for text that is not criteria: says which part. */
export class SearchParamsError extends Error {}

/** The filters the text says, by field (the offer search's `FieldFilter`s). */
export function parseSearchParams(text: string): OfferFilters {
  const filters: Record<string, Record<string, unknown>> = {};
  const source = text.trim();
  const term = new RegExp(TERM_SOURCE, "gy");
  while (term.lastIndex < source.length) {
    const start = term.lastIndex;
    const match = term.exec(source);
    if (!match) throw new SearchParamsError(`search_params: cannot read ${JSON.stringify(source.slice(start, start + 40))}: terms are field<op>value, separated by spaces`);
    const [, field, op, raw] = match;
    const operator = OPERATORS[op.trim()];
    const value = raw.startsWith("[") ? raw.slice(1, -1).split(",").map((v) => v.trim()).filter(Boolean).map((v) => valueOf(field, v)) : valueOf(field, raw);
    if ((operator === "in" || operator === "notin") !== Array.isArray(value)) throw new SearchParamsError(`search_params: ${field} ${op.trim()} takes ${Array.isArray(value) ? "one value" : "a list [a,b]"}`);
    (filters[field] ??= {})[operator] = value;
    while (source[term.lastIndex] === " ") term.lastIndex++;
  }
  return filters as OfferFilters;
}

/**
 * Why `filters` cannot be written as criteria text (a value with a space or a bracket, which the text cannot hold:
 * a GPU name's spaces are written as underscores), or undefined when they can.
 */
export function unwritableCriteria(filters: OfferFilters): string | undefined {
  for (const [field, filter] of Object.entries(filters as Record<string, Record<string, unknown>>)) {
    for (const value of Object.values(filter ?? {}).flat()) {
      if (typeof value === "string" && field !== "gpu_name" && /[\s[\],<>=!]/.test(value)) return `${field}: ${JSON.stringify(value)} has a space or a sign the service's criteria text cannot hold`;
    }
  }
  return undefined;
}

/** The offer filters of a worker group: its criteria, and at least its GPU memory (GB; the market counts MB). */
export function workerFilters(filters: OfferFilters, gpuRamGb: number): OfferFilters {
  const gpuRam = filters.gpu_ram ?? {};
  return { ...filters, gpu_ram: { ...gpuRam, gte: Math.max(Number(gpuRam.gte ?? 0), gpuRamGb * 1000) } };
}

/** The text of `filters` in the CLI's words, which `parseSearchParams` reads back (see unwritableCriteria). */
export function searchParamsText(filters: OfferFilters): string {
  const symbol: Record<string, string> = { eq: "=", neq: "!=", lt: "<", lte: "<=", gt: ">", gte: ">=" };
  const text = (field: string, v: unknown) => (typeof v === "boolean" ? (v ? "True" : "False") : field === "gpu_name" ? String(v).replace(/ /g, "_") : String(v));
  const terms: string[] = [];
  for (const [field, filter] of Object.entries(filters as Record<string, Record<string, unknown>>)) {
    for (const [op, value] of Object.entries(filter ?? {})) {
      if (value === undefined) continue;
      terms.push(Array.isArray(value) ? `${field} ${op} [${value.map((v) => text(field, v)).join(",")}]` : `${field}${symbol[op]}${text(field, value)}`);
    }
  }
  return terms.join(" ");
}

function valueOf(field: string, raw: string): string | number | boolean {
  const text = raw.replace(/^["']|["']$/g, "");
  if (/^(true|false)$/i.test(text)) return text.toLowerCase() === "true";
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  return field === "gpu_name" ? text.replace(/_/g, " ") : text;
}
