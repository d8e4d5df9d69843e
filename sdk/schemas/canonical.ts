/**
 * Canonical JSON: `JSON.stringify` with every object's keys sorted (by UTF-16 code unit, as `Array.sort` does),
 * so two values that differ only in key order give the same text. Keys whose value is `undefined` are left out
 * and `undefined` in an array is `null`, as `JSON.stringify` does. Use it to compare values or to hash them.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
