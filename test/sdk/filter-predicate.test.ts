import { InvalidFilter, matchesFilters, offerMatches } from "../../sdk/filter-predicate";
import { FieldType, OFFER_FIELDS } from "../../sdk/schemas";
import { search } from "../../emulator/domain/filters";

// The one reading of search filters, rule by rule. Each row: the filters, then for each record below whether it
// passes. The emulator's search (with its index and number-column fast paths) must find exactly the records the
// predicate passes, so the SDK's "does the rented offer still meet the criteria" and the search cannot disagree.
const FIELDS: Record<string, FieldType> = { n: "number", b: "boolean", s: "string", where: "location" };
const RECORDS = [
  { id: 0, n: 1, b: true, s: "RTX 4090", where: "Texas, US" },
  { id: 1, n: 2, b: false, s: "RTX 3090", where: "Quebec, CA" },
  { id: 2, n: 8, b: true, s: "4090", where: "US" },
  { id: 3, n: null, b: false, s: "H100", where: null },
];
type Row = [rule: string, filters: Record<string, unknown>, passes: [boolean, boolean, boolean, boolean]];

const ROWS: Row[] = [
  // Operators on numbers; several on one field all apply.
  ["eq", { n: { eq: 2 } }, [false, true, false, false]],
  ["neq (a record without a value is not equal)", { n: { neq: 2 } }, [true, false, true, true]],
  ["lt", { n: { lt: 2 } }, [true, false, false, false]],
  ["lte", { n: { lte: 2 } }, [true, true, false, false]],
  ["gt (a record without a value is not ordered)", { n: { gt: 1 } }, [false, true, true, false]],
  ["gte", { n: { gte: 2 } }, [false, true, true, false]],
  ["in", { n: { in: [1, 8] } }, [true, false, true, false]],
  ["notin", { n: { notin: [1, 8] } }, [false, true, false, true]],
  ["several operators on one field", { n: { gte: 2, lte: 7 } }, [false, true, false, false]],
  ["filters on several fields", { n: { gte: 1 }, b: { eq: true } }, [true, false, true, false]],
  // Numbers given as text.
  ["a number as text", { n: { eq: "2" } }, [false, true, false, false]],
  ["a decimal as text, compared", { n: { gt: "1.5" } }, [false, true, true, false]],
  ["numbers as text in a list", { n: { in: ["1", "8"] } }, [true, false, true, false]],
  // Booleans: true/false, "true"/"false", "1"/"0", 1/0.
  ["a boolean", { b: { eq: true } }, [true, false, true, false]],
  ["a boolean as text", { b: { eq: "false" } }, [false, true, false, true]],
  ["a boolean as 1", { b: { eq: 1 } }, [true, false, true, false]],
  ["a boolean as \"0\"", { b: { eq: "0" } }, [false, true, false, true]],
  ["neq on a boolean", { b: { neq: true } }, [false, true, false, true]],
  // Text: a value of another type is read as text; matching is exact.
  ["text", { s: { eq: "RTX 4090" } }, [true, false, false, false]],
  ["a number given for a text field", { s: { eq: 4090 } }, [false, false, true, false]],
  ["text in a list", { s: { in: ["H100", "RTX 3090"] } }, [false, true, false, true]],
  // A location matches its whole text or its country code.
  ["a location by country code", { where: { eq: "US" } }, [true, false, true, false]],
  ["a location by its whole text", { where: { eq: "Quebec, CA" } }, [false, true, false, false]],
  ["locations in a list", { where: { in: ["CA", "Texas, US"] } }, [true, true, false, false]],
  ["a location not in a list", { where: { notin: ["US"] } }, [false, true, false, true]],
  // null: no filter when the filter is null; a record without a value when the value is.
  ["a filter sent as null is no filter", { n: null }, [true, true, true, true]],
  ["eq null finds records without a value", { n: { eq: null } }, [false, false, false, true]],
  ["an ordering against null holds for none", { n: { lt: null } }, [false, false, false, false]],
  // Fields the search does not know are ignored, as the live service ignores them.
  ["an unknown field", { gpu_flavour: { eq: "x" } }, [true, true, true, true]],
  ["an unknown field named like Object's own", { constructor: { eq: 1 }, ["__proto__"]: { eq: 1 } }, [true, true, true, true]],
];

describe("the filter predicate", () => {
  it.each(ROWS)("%s", (_rule, filters, passes) => {
    expect(RECORDS.map((record) => matchesFilters(record, filters, FIELDS))).toEqual(passes);
    const found = search(RECORDS, { filters, limit: RECORDS.length }, FIELDS, { defaultLimit: 10, maxLimit: 10 });
    expect(found.map((record) => record.id)).toEqual(RECORDS.filter((_, i) => passes[i]).map((record) => record.id));
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ["a number field given text that is no number", { n: { gte: "lots" } }, /filter n: "lots" is not a number/],
    ["a number field given an empty text", { n: { eq: " " } }, /is not a number/],
    ["a boolean field given another word", { b: { eq: "yes" } }, /filter b: "yes" is not a boolean/],
    ["a boolean field given 2", { b: { eq: 2 } }, /is not a boolean/],
    ["an operator that does not exist", { n: { around: 2 } }, /filter n: expected an object of operators/],
    ["a list for a comparison", { n: { gte: [1] } }, /expected an object of operators/],
    ["a bare value for a field", { n: 2 }, /expected an object of operators/],
  ])("refuses %s, as the service does (invalid_args)", (_rule, filters, message) => {
    expect(() => matchesFilters(RECORDS[0], filters, FIELDS)).toThrow(InvalidFilter);
    expect(() => matchesFilters(RECORDS[0], filters, FIELDS)).toThrow(message);
    expect(() => search(RECORDS, { filters }, FIELDS, { defaultLimit: 10, maxLimit: 10 })).toThrow(
      expect.objectContaining({ kind: "bad_request", code: "invalid_args", message: expect.stringMatching(message) }),
    );
  });

  it("reads offers with the offer search's fields, and no offer meets filters the service would refuse", () => {
    const offer = { id: 7, num_gpus: 2, verified: true, geolocation: "Oregon, US", gpu_name: "RTX 4090", dph_total: 0.4 };
    expect(OFFER_FIELDS.num_gpus).toBe("number");
    expect(offerMatches(offer, { num_gpus: { eq: "2" }, verified: { eq: 1 }, geolocation: { in: ["US"] }, dph_total: { lte: "0.5" } })).toBe(true);
    expect(offerMatches(offer, { num_gpus: { gte: 4 } })).toBe(false);
    expect(offerMatches(offer, { unknown_field: { eq: "x" } })).toBe(true);
    expect(offerMatches(offer, { num_gpus: { eq: "two" } })).toBe(false);
  });
});
