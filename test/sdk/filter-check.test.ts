import { existsSync, readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { filterProblems, nearestName, OfferFiltersInput } from "../../sdk";
import { describeIssues, FieldType, filterValueFits, OFFER_FIELDS, OFFER_FILTER_FIELDS } from "../../sdk/schemas";

/**
 * The one check of declared search filters (sdk/filter-check.ts), which every kind's filters and the lookups go
 * through: field names against the fields the search knows, operators, operands by the field's type, each
 * problem named at its place with the nearest name, and never a value quoted. The table of fields is judged by
 * the vendor's description of the search and by offers recorded from the live service.
 */

const FIELDS: Record<string, FieldType> = { reliability: "number", verified: "boolean", gpu_name: "string", geolocation: "location" };
const problems = (filters: Record<string, unknown>) => filterProblems(filters, FIELDS).map(({ path, message }) => [path.join("."), message]);

describe("nearestName", () => {
  it("finds the name a misspelling stands for: a letter dropped, added, changed or swapped, case and underscores aside", () => {
    const inputs = ["maxLifetime", "maxPricePerHour", "gpuModel", "label", "idleTimeout"];
    expect(nearestName("maxLifetme", inputs)).toBe("maxLifetime");
    expect(nearestName("max_lifetime", inputs)).toBe("maxLifetime");
    expect(nearestName("gpumodle", inputs)).toBe("gpuModel");
    expect(nearestName("lable", inputs)).toBe("label");
    expect(nearestName("reliabilty", Object.keys(OFFER_FILTER_FIELDS))).toBe("reliability");
    expect(nearestName("gpuRam", Object.keys(OFFER_FILTER_FIELDS))).toBe("gpu_ram");
    expect(nearestName("gtee", ["eq", "gte", "gt"])).toBe("gte");
  });

  it("suggests nothing when nothing is close", () => {
    expect(nearestName("zone", ["maxLifetime", "label"])).toBeUndefined();
    expect(nearestName("region", Object.keys(OFFER_FILTER_FIELDS))).toBeUndefined();
    expect(nearestName("x", ["eq", "gte"])).toBeUndefined();
  });
});

describe("filterProblems", () => {
  it("passes what the service reads: typed operands, numbers and flags as text (stack config gives text), lists, null as no filter", () => {
    expect(problems({ reliability: { gte: 0.99, lte: "1" }, verified: { eq: "true" }, gpu_name: { in: ["RTX 4090", "RTX 3090"] } })).toEqual([]);
    expect(problems({ geolocation: { notin: ["US", "Texas, US"] }, reliability: null, verified: { eq: 1, neq: null } })).toEqual([]);
  });

  it("refuses a field the search does not know, naming the nearest, or listing its fields when none is near", () => {
    expect(problems({ reliabilty: { gte: 0.99 } })).toEqual([["reliabilty", expect.stringMatching(/not a field the search filters on \(the service would ignore it, and rent without it\): did you mean reliability\?$/)]]);
    expect(problems({ region: { eq: "US" } })).toEqual([["region", expect.stringContaining("Its fields: geolocation, gpu_name, reliability, verified")]]);
    // Own keys only: an object's inherited names are no fields.
    expect(problems({ constructor: { eq: 1 } })).toEqual([["constructor", expect.stringContaining("not a field")]]);
  });

  it("refuses an operand of the wrong type, naming the field and what it takes, and never quoting the value", () => {
    const secret = "s3cr3t-token-value";
    const found = problems({ reliability: { gte: "high", lt: secret }, verified: { eq: "yes" }, gpu_name: { eq: { nested: secret } } });
    expect(found).toEqual([
      ["reliability.gte", 'reliability takes a number (or its decimal text, "0.99", as stack config gives it)'],
      ["reliability.lt", expect.stringMatching(/^reliability takes a number/)],
      ["verified.eq", 'verified takes true or false (or "true"/"false", 1/0)'],
      ["gpu_name.eq", "gpu_name takes text"],
    ]);
    expect(JSON.stringify(found)).not.toContain(secret);
    expect(JSON.stringify(found)).not.toContain("high");
  });

  it("refuses an unknown operator (naming the nearest), a list operator without a list, a bad list item, and a bare value", () => {
    expect(problems({ reliability: { gtee: 0.9 } })).toEqual([["reliability.gtee", "not an operator: did you mean gte? (operators: eq, neq, lt, lte, gt, gte, in, notin)"]]);
    expect(problems({ reliability: { above: 0.9 } })).toEqual([["reliability.above", "not an operator (operators: eq, neq, lt, lte, gt, gte, in, notin)"]]);
    expect(problems({ gpu_name: { in: "RTX 4090" } })).toEqual([["gpu_name.in", "expected a list of values (gpu_name takes text)"]]);
    expect(problems({ reliability: { notin: [0.9, "x", 1] } })).toEqual([["reliability.notin.1", expect.stringMatching(/^reliability takes a number/)]]);
    expect(problems({ reliability: 0.99 })).toEqual([["reliability", expect.stringMatching(/^expected an object of operators \(eq, neq/)]]);
  });

  it("is the zod type of declared offer filters: each problem an issue at its place, below the input", () => {
    const parsed = OfferFiltersInput.safeParse({ reliabilty: { gte: 0.99 }, num_gpus: { gte: "two" } });
    expect(parsed.success).toBe(false);
    expect(describeIssues(parsed.error!)).toBe(
      "reliabilty: not a field the search filters on (the service would ignore it, and rent without it): did you mean reliability?; " +
        'num_gpus.gte: num_gpus takes a number (or its decimal text, "0.99", as stack config gives it)',
    );
    expect(OfferFiltersInput.safeParse({ gpu_ram: { gte: 24000 }, cpu_arch: { eq: "amd64" } }).success).toBe(true);
    expect(OfferFiltersInput.safeParse("reliability >= 0.99").success).toBe(false);
  });
});

/**
 * The fields a declared filter may name: every field the emulator's market filters on, and every field the vendor
 * documents as a filter of `POST /api/v0/bundles/`, with a type that fits the values the vendor's example offer and
 * the offers recorded from the live service carry. The evidence lives beside the repository (`../shared`); where
 * it is missing these tests are reported skipped with the reason, never passed without running.
 */
const SHARED = resolve(__dirname, "../../../shared/real-service");
const missing = existsSync(SHARED) ? "" : ` (skipped: ${SHARED} is not on this machine)`;
(missing ? describe.skip : describe)(`the offer fields a filter may name, judged by the vendor and the live service${missing}`, () => {
  const vendor = () => parseYaml(readFileSync(resolve(SHARED, "vendor-openapi.yaml"), "utf8"));
  const search = () => vendor().paths["/api/v0/bundles"].post;
  const recorded = (): Record<string, unknown>[] =>
    readdirSync(resolve(SHARED, "samples"))
      .filter((file) => /^0[12]-offers-.*\.json$/.test(file) && !file.endsWith(".source.json"))
      .flatMap((file) => {
        const body = JSON.parse(readFileSync(resolve(SHARED, "samples", file), "utf8"));
        return Array.isArray(body) ? body : body.offers;
      });

  it("holds every filter the vendor documents for the offer search, and every field of the emulator's market", () => {
    const body = search().requestBody.content["application/json"].schema.properties;
    const filters = Object.keys(body).filter((key) => !["limit", "type", "order", "allocated_storage"].includes(key));
    expect(filters.length).toBeGreaterThan(40);
    expect(filters.filter((field) => !(field in OFFER_FILTER_FIELDS))).toEqual([]);
    expect(Object.keys(OFFER_FIELDS).filter((field) => !(field in OFFER_FILTER_FIELDS))).toEqual([]);
  });

  it("gives each field a type that takes the values recorded offers and the vendor's example carry", () => {
    const offers = [...recorded(), search().responses["200"].content["application/json"].example.offers];
    expect(offers.length).toBeGreaterThanOrEqual(4);
    const misfits = offers.flatMap((offer) =>
      Object.entries(offer)
        .filter(([field, value]) => field in OFFER_FILTER_FIELDS && value !== null)
        .filter(([field, value]) => !filterValueFits(OFFER_FILTER_FIELDS[field], value) || (OFFER_FILTER_FIELDS[field] === "string" && typeof value !== "string"))
        .map(([field, value]) => `${field}: ${JSON.stringify(value)} is not ${OFFER_FILTER_FIELDS[field]}`),
    );
    expect(misfits).toEqual([]);
  });
});
