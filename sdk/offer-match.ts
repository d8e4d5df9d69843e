import type { OfferFilters } from "./offer-filters";
import type { FieldFilter } from "./schemas";

type Scalar = string | number | boolean | null;

/**
 * Whether one offer, as a search returned it, satisfies offer-search filters read as the service reads them:
 * a value sent as a string is taken as the field's type (`"1"` for a number), several operators on a field all
 * apply, a location (`"Texas, US"`) matches its whole text or its country code, and a field the offer does not
 * have is ignored (the service ignores filters on fields it does not know).
 */
export function offerMatches(offer: Readonly<Record<string, unknown>>, filters: OfferFilters): boolean {
  return Object.entries(filters).every(([field, filter]) => !filter || !(field in offer) || fieldMatches(field, offer[field], filter));
}

function fieldMatches(field: string, value: unknown, filter: FieldFilter): boolean {
  const as = (wanted: Scalar): Scalar => coerce(wanted, value);
  const equals = (wanted: Scalar) => value === as(wanted) || (field === "geolocation" && typeof value === "string" && country(value) === wanted);
  return Object.entries(filter).every(([op, wanted]) => {
    if (wanted === undefined) return true;
    switch (op) {
      case "eq":
        return equals(wanted as Scalar);
      case "neq":
        return !equals(wanted as Scalar);
      case "in":
        return (wanted as Scalar[]).some(equals);
      case "notin":
        return !(wanted as Scalar[]).some(equals);
      default:
        return compare(op, value, as(wanted as Scalar));
    }
  });
}

function compare(op: string, value: unknown, wanted: Scalar): boolean {
  if (typeof value !== "number" || typeof wanted !== "number") return false;
  return op === "lt" ? value < wanted : op === "lte" ? value <= wanted : op === "gt" ? value > wanted : op === "gte" ? value >= wanted : false;
}

/** A filter value in the type of the offer's own value. */
function coerce(wanted: Scalar, like: unknown): Scalar {
  if (typeof like === "number" && typeof wanted === "string" && wanted.trim() !== "") return Number(wanted);
  if (typeof like === "boolean" && typeof wanted === "string") return wanted === "true" || wanted === "1";
  return wanted;
}

function country(location: string): string {
  return location.split(",").pop()!.trim();
}
