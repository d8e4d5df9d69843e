import { execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { preparedPluginFolder } from "../../cli/plugin-install";
import { PLUGIN_EXECUTABLE } from "../../provider/plugin/names";
import { ensureToolchain } from "../../cli/toolchain";
import { REPO_ROOT, scratchFolders } from "../helpers/paths";
import { TestStack } from "../helpers/pulumi-stack";

const run = promisify(execFile);
const CODE_CACHE = path.join(REPO_ROOT, "dist", "provider", "code-cache.js");

/**
 * Installed packages of every form a program meets: CommonJS that reads its own `require`, `__filename` and
 * `__dirname`, CommonJS that imports an ES module dynamically, an ES module that CommonJS requires, a package with
 * no `type` whose file is an ES module, and a file that does not parse. The program's own file is outside
 * node_modules.
 */
const FILES: Record<string, string> = {
  "node_modules/cjs/package.json": `{"name":"cjs","main":"index.js"}`,
  "node_modules/cjs/index.js": `exports.seen = { self: require.resolve("./index.js") === __filename, dir: __dirname.endsWith("cjs"),
    main: require.main === process.mainModule, paths: Array.isArray(require.resolve.paths("x")), cached: __filename in require.cache };
exports.later = require("./importer.js").later;`,
  "node_modules/cjs/importer.js": `exports.later = () => import("./later.mjs").then((m) => m.word);`,
  "node_modules/cjs/later.mjs": `export const word = "imported";`,
  "node_modules/esm/package.json": `{"name":"esm","main":"index.mjs"}`,
  "node_modules/esm/index.mjs": `export const word = "required";`,
  "node_modules/untyped/package.json": `{"name":"untyped","main":"index.js"}`,
  "node_modules/untyped/index.js": `export const word = "detected";`,
  // TypeScript's compiler mentions import() in its messages, and is cached all the same.
  "node_modules/typescript/package.json": `{"name":"typescript","main":"lib/typescript.js"}`,
  "node_modules/typescript/lib/typescript.js": `exports.word = "'import()' calls can be written";`,
  "node_modules/broken/package.json": `{"name":"broken","main":"index.js"}`,
  "node_modules/broken/index.js": `exports.word = ;`,
  "program.js": `const attempt = (name) => { try { const m = require(name); return m.word ?? m.seen; } catch (e) { return e.name; } };
require("cjs").later().then((later) => console.log(JSON.stringify({ cjs: attempt("cjs"), esm: attempt("esm"),
  untyped: attempt("untyped"), broken: attempt("broken"), typescript: attempt("typescript"), later })));`,
};

describe("the code cache every Node.js process of the toolchain loads first (provider/code-cache.ts)", () => {
  const scratch = scratchFolders("code-cache");
  let dir: string;
  let cache: string;
  const entries = () => fs.readdirSync(cache).map((name) => path.join(cache, name));
  const withCache = async (env: Record<string, string> = {}) =>
    (await run(process.execPath, ["--require", CODE_CACHE, "program.js"], { cwd: dir, env: { ...process.env, GPU_RENTAL_CACHE: path.dirname(path.dirname(cache)), ...env } })).stdout;

  beforeAll(() => {
    dir = scratch();
    for (const [file, text] of Object.entries(FILES)) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), text);
    }
    cache = path.join(dir, "cache", "code-cache", `node-${process.version}-${process.arch}`);
  });

  it("changes nothing a module sees, and keeps only installed CommonJS modules' code, each once", async () => {
    const plain = await withCache({ GPU_RENTAL_CODE_CACHE: "0" });
    expect(fs.existsSync(cache)).toBe(false);
    expect(JSON.parse(plain)).toEqual({
      cjs: { self: true, dir: true, main: true, paths: true, cached: true },
      esm: "required",
      untyped: expect.any(String),
      broken: "SyntaxError",
      typescript: "'import()' calls can be written",
      later: "imported",
    });
    expect(await withCache()).toBe(plain);
    // cjs/index.js and TypeScript's compiler alone: ES modules, the module that imports, the file that does not
    // parse and the program's own file are Node's to compile.
    expect(entries()).toHaveLength(2);
    const entry = entries().find((file) => fs.readFileSync(file).length > 0)!;
    const written = fs.statSync(entry).mtimeMs;

    // The next run takes the kept code as it is (V8 accepts it, so nothing is written again).
    expect(await withCache()).toBe(plain);
    expect(fs.statSync(entry).mtimeMs).toBe(written);

    // An entry V8 refuses (damaged, or from another V8) is compiled as usual and written again.
    fs.writeFileSync(entry, "not code");
    expect(await withCache()).toBe(plain);
    expect(fs.readFileSync(entry, "utf8")).not.toBe("not code");
    expect(entries()).toHaveLength(2);
  });

  it("is loaded by the programs the language host runs and by the dynamic-provider plugin", async () => {
    const program = scratch();
    const kept = path.join(program, "cache");
    const folder = path.join(kept, "code-cache", `node-${process.version}-${process.arch}`);
    // A JavaScript program whose @pulumi/pulumi is this repository's.
    fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(program, "node_modules"));
    fs.writeFileSync(path.join(program, "Pulumi.yaml"), "name: code-cache\nruntime: nodejs\nmain: index.js\n");
    fs.writeFileSync(path.join(program, "index.js"), `exports.word = require("@pulumi/pulumi").getStack();\n`);
    const stack = new TestStack("code-cache", { GPU_RENTAL_CACHE: kept }, program);
    try {
      await stack.init({}, {});
      await stack.ok("preview");
      const afterProgram = fs.readdirSync(folder).length;
      expect(afterProgram).toBeGreaterThan(100); // @pulumi/pulumi's modules and their dependencies
      fs.rmSync(folder, { recursive: true });

      // The plugin, started as the engine starts it (in the program's folder), keeps the server's modules.
      expect(await entriesOfServingPlugin(path.join(ensureToolchain().bin, "pulumi-resource-pulumi-nodejs"), program, kept)).toBeGreaterThan(10); // gRPC and the protocol's messages
    } finally {
      await stack.remove();
    }
  }, 120_000);

  it("is loaded by the gpu-rental provider plugin, in the folder `gpu-rental plugin install` prepares and in the package's own", async () => {
    const folder = preparedPluginFolder(() => undefined);
    const executables = [path.join(folder, PLUGIN_EXECUTABLE), path.join(folder, "node_modules", "gpu-rental", "plugin", PLUGIN_EXECUTABLE)];
    for (const executable of executables) {
      const kept = path.join(scratch(), "cache");
      // gRPC, the protocol's messages, zod and axios, and gpu-rental's own modules (installed, so cached too).
      expect(await entriesOfServingPlugin(executable, folder, kept)).toBeGreaterThan(100);
    }
  }, 120_000);

  it("is loaded by the gpu-rental command of an installed package", async () => {
    const installed = path.join(preparedPluginFolder(() => undefined), "node_modules", "gpu-rental");
    const kept = path.join(scratch(), "cache");
    const version = await run(process.execPath, [path.join(installed, "bin", "gpu-rental.js"), "--version"], { env: { ...process.env, GPU_RENTAL_CACHE: kept } });
    expect(version.stdout.trim()).toBe(JSON.parse(fs.readFileSync(path.join(installed, "package.json"), "utf8")).version);
    // Written as the command exits: its command-line parser's modules, at least.
    expect(fs.readdirSync(path.join(kept, "code-cache", `node-${process.version}-${process.arch}`)).length).toBeGreaterThan(0);
  });
});

/**
 * Starts a plugin as the engine does (in `cwd`, with the code cache's folder under `kept`), waits for the port it
 * serves on, then for the cache's entries, which are written once it has stopped loading modules (about 1.5 s);
 * stops it and answers how many it wrote.
 */
async function entriesOfServingPlugin(executable: string, cwd: string, kept: string): Promise<number> {
  const folder = path.join(kept, "code-cache", `node-${process.version}-${process.arch}`);
  const plugin = spawn(executable, [], { cwd, env: { ...process.env, GPU_RENTAL_CACHE: kept } });
  try {
    await new Promise((resolve, reject) => {
      plugin.stdout.once("data", resolve);
      plugin.once("exit", (code) => reject(new Error(`${executable} exited ${code}`)));
    });
    const deadline = Date.now() + 30_000;
    const written = () => (fs.existsSync(folder) ? fs.readdirSync(folder).filter((name) => !name.endsWith(".partial")).length : 0);
    // Entries settle: the count stops growing once the plugin has written them all.
    let seen = -1;
    while ((written() === 0 || written() !== seen) && Date.now() < deadline) {
      seen = written();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return written();
  } finally {
    plugin.kill();
  }
}
