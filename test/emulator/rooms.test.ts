import * as fs from "node:fs";
import * as path from "node:path";

// The emulator's domain (emulator/domain/) holds state and rules only: the wire (HTTP, wire bodies) lives in
// emulator/http/, machines and their processes in emulator/sandbox/, files in emulator/storage/. Read from the
// sources, so a change that breaks the rule fails here at once, whatever it does at run time.
const ROOT = path.resolve(__dirname, "..", "..");
const DOMAIN = path.join(ROOT, "emulator", "domain");

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    return entry.isDirectory() ? sources(file) : file.endsWith(".ts") ? [file] : [];
  });
}

const files = sources(DOMAIN).map((file) => ({ name: path.relative(ROOT, file), text: fs.readFileSync(file, "utf8") }));

/** The modules a source imports (static imports, re-exports, `import()` and `require()`). */
function importsOf(text: string): string[] {
  const found = text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm);
  return [...found].map((match) => match[1]);
}

/** What breaks the rule in one file: each offence named. */
function offences(name: string, text: string): string[] {
  const found: string[] = [];
  for (const spec of importsOf(text)) {
    if (/child_process|cluster|worker_threads/.test(spec)) found.push(`${name} imports ${spec} (processes live in emulator/sandbox/)`);
    if (/fastify|^node:https?$|^https?$/.test(spec)) found.push(`${name} imports ${spec} (HTTP lives in emulator/http/)`);
    if (!spec.startsWith(".")) continue;
    const target = path.relative(ROOT, path.resolve(ROOT, path.dirname(name), spec));
    if (!target.startsWith(`emulator${path.sep}domain`) && !target.startsWith(`sdk${path.sep}`)) {
      found.push(`${name} imports ${target} (the domain imports only itself and sdk/)`);
    }
  }
  if (/\bprocess\.kill\s*\(/.test(text)) found.push(`${name} signals a process`);
  // A wire body: a function or method named `...View`/`view`, or a body that says `success`.
  for (const match of text.matchAll(/^\s*(?:export\s+)?(?:function\s+)?(?:private\s+|static\s+)*(\w*[vV]iew)\s*\([^)]*\)\s*(?::[^{;=]+)?\{\s*$/gm)) {
    found.push(`${name} builds a wire view (${match[1]}; wire views live in emulator/http/views/)`);
  }
  if (/^\s*success\s*:/m.test(text)) found.push(`${name} builds a response body (success: ...)`);
  return found;
}

describe("the emulator's domain holds state and rules only", () => {
  it("reads every file of emulator/domain/", () => {
    expect(files.map((file) => file.name)).toEqual(expect.arrayContaining([path.join("emulator", "domain", "instances.ts")]));
    expect(files.length).toBeGreaterThan(20);
  });

  it("imports nothing from http/, sandbox/, ssh/ or storage/, spawns no process and builds no wire body", () => {
    expect(files.flatMap((file) => offences(file.name, file.text))).toEqual([]);
  });

  it("would see each kind of offence (the checks above can fail)", () => {
    const name = path.join("emulator", "domain", "x.ts");
    expect(offences(name, 'import { route } from "../http/routes";')).toHaveLength(1);
    expect(offences(name, 'import { spawn } from "node:child_process";')).toHaveLength(1);
    expect(offences(name, 'const cp = require("child_process");')).toHaveLength(1);
    expect(offences(name, "process.kill(-pid, signal);")).toHaveLength(1);
    expect(offences(name, 'import { Machines } from "../sandbox/machines";')).toHaveLength(1);
    expect(offences(name, "export function instanceView(instance: InstanceRecord): Record<string, unknown> {")).toHaveLength(1);
    expect(offences(name, "  view(method: MethodRecord) {")).toHaveLength(1);
    expect(offences(name, "    return {\n      success: true,")).toHaveLength(1);
    expect(offences(name, 'import { Offer } from "../../sdk/schemas";\nimport { badRequest } from "./errors";')).toEqual([]);
  });
});

describe("the CLI reaches the emulator through its public API", () => {
  it("imports emulator/index.ts only, never a module inside the emulator", () => {
    const cli = sources(path.join(ROOT, "cli")).map((file) => ({ name: path.relative(ROOT, file), text: fs.readFileSync(file, "utf8") }));
    const inside = cli.flatMap(({ name, text }) =>
      importsOf(text)
        .filter((spec) => spec.startsWith("."))
        .map((spec) => path.relative(ROOT, path.resolve(ROOT, path.dirname(name), spec)))
        .filter((target) => target.startsWith(`emulator${path.sep}`))
        .map((target) => `${name} imports ${target}`),
    );
    expect(cli.some(({ text }) => importsOf(text).includes("../emulator"))).toBe(true);
    expect(inside).toEqual([]);
  });
});
