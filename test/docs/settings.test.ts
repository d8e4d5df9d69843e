import * as fs from "node:fs";
import * as path from "node:path";
import * as connection from "../../sdk/connection";
import { configureProvider } from "../../provider/plugin/configure";
import { spendCapOf } from "../../sdk";

// One truth per provider setting: the stack config keys the code reads (every `.get(<key>)` of a config source in
// sdk/, provider/ and cli/) are the settings the reference (docs/reference.md, generated from the schema), the
// schema (its config and its explicit provider's inputs) and docs/installation-configuration.md each list.
const ROOT = path.resolve(__dirname, "..", "..");

function* sources(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== "generated") yield* sources(file);
    else if (entry.isFile() && file.endsWith(".ts")) yield file;
  }
}

/** The keys `text` reads with `.get(...)`: `gpu-rental:<name>` literals and the CONFIG_* constants of sdk/connection.ts. */
function keysRead(text: string): string[] {
  const constants = connection as unknown as Record<string, unknown>;
  return [...text.matchAll(/\.get\(\s*(?:(CONFIG_\w+)|["'`](gpu-rental:\w+)["'`])\s*\)/g)].map(([, constant, literal]) => {
    if (literal) return literal;
    if (typeof constants[constant] !== "string") throw new Error(`${constant} is not a config key of sdk/connection.ts`);
    return constants[constant] as string;
  });
}

const read = [...new Set([...sources("sdk"), ...sources("provider"), ...sources("cli")].flatMap((file) => keysRead(fs.readFileSync(path.join(ROOT, file), "utf8"))))].sort();
const names = read.map((key) => key.replace(/^gpu-rental:/, ""));

/** The first column's code spans of the markdown table that follows `heading` in `page`. */
function tableKeys(page: string, heading: string): string[] {
  const markdown = fs.readFileSync(path.join(ROOT, page), "utf8");
  const after = markdown.slice(markdown.indexOf(heading) + heading.length);
  const table = /\n(\|[^\n]*\n)+/.exec(after)![0];
  return table.split("\n").slice(3).filter(Boolean).map((row) => /^\| `([^`]+)`/.exec(row)![1]).sort();
}

describe("the provider's settings, one truth", () => {
  it("the code reads these stack config keys (and the scan sees a key read either way)", () => {
    expect(read).toEqual(["gpu-rental:apiKey", "gpu-rental:apiUrl", "gpu-rental:maxHourlySpend"]);
    expect(keysRead('config?.get(CONFIG_API_URL) + c.get("gpu-rental:other")')).toEqual(["gpu-rental:apiUrl", "gpu-rental:other"]);
  });

  it("docs/reference.md, the schema's config and its provider's inputs list exactly those", () => {
    expect(tableKeys("docs/reference.md", "## Provider configuration")).toEqual(names);
    const schema = JSON.parse(fs.readFileSync(path.join(ROOT, "schema.json"), "utf8"));
    expect(Object.keys(schema.config.variables).sort()).toEqual(names);
    expect(Object.keys(schema.provider.inputProperties).sort()).toEqual(names);
  });

  it("docs/installation-configuration.md lists exactly those", () => {
    expect(tableKeys("docs/installation-configuration.md", "## Configuration")).toEqual(read);
  });

  it("an explicit provider's maxHourlySpend is its account's cap, as the default provider's stack config is", () => {
    expect(spendCapOf(configureProvider({ maxHourlySpend: 0.5 }, "0.1.0"))).toBe(0.5);
    expect(spendCapOf(configureProvider({ apiUrl: "http://127.0.0.1:1" }, "0.1.0"))).toBeUndefined();
  });
});
