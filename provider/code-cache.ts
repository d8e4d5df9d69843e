/**
 * A code cache for the Node.js processes the toolchain starts (programs, through the language host, and the
 * dynamic-provider plugin), loaded first with `node --require`, and for gpu-rental's provider plugin, whose entry
 * requires it first (plugin/index.js). Every run of a program compiles the same
 * libraries again: @pulumi/pulumi's 770 modules and, for a TypeScript program, the 9 MB TypeScript compiler,
 * some 0.3 CPU-s of each start. Node 22 keeps V8's compiled code between runs (NODE_COMPILE_CACHE); Node 20,
 * which gpu-rental supports, does not, so this does the same for installed packages (files under a
 * `node_modules` folder): a program's own files change too often to be worth it, and are compiled as usual.
 *
 * An entry is named by the module's text (its CRC-32 and length), not its path: V8 checks only a source's length
 * before taking cached code, so the text must decide, and the same package installed in two folders shares its
 * entries. Entries are written once the process has run a while (then they hold the functions it called, not
 * only the top level), or when it exits, each to a temporary file renamed into place, so processes started at
 * once never read half an entry. `GPU_RENTAL_CODE_CACHE=0` turns it off.
 *
 * It is copied into the toolchain's folder (tools/pulumi-toolchain.sh) and so requires nothing of gpu-rental.
 */
import * as fs from "node:fs";
import Module from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import * as vm from "node:vm";
import * as zlib from "node:zlib";

/** Entries are written this long after the last module compiled without one (the process is busy, not loading). */
const SETTLE_MS = 1_500;
/** Past this many entries the folder starts over: entries of packages since replaced are never read again. */
const MAX_ENTRIES = 20_000;

/**
 * What may be a dynamic `import()` (in code, a comment or a string that code evaluates): Node 20's V8 loses a
 * script's import handler when its code comes from a cache made by another process, so such a module is left to
 * Node. A string that merely mentions it (TypeScript's messages do) costs only the saving.
 */
const IMPORT_CALL = /\bimport\s*(?:\(|\/[*/])/;

/**
 * Modules cached all the same: TypeScript's compiler, which every TypeScript program loads (ts-node), and whose
 * seven `import(` are all in its messages and display text (5.x, checked): it never calls import(). Should a later
 * one, the call fails at once (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), never quietly. Saves 0.1 to 0.2 CPU-s a run.
 */
const MENTIONS_ONLY = [`${path.sep}node_modules${path.sep}typescript${path.sep}lib${path.sep}typescript.js`];

type Compile = (this: Module, content: string, filename: string, format?: string) => unknown;
interface Internals {
  prototype: { _compile: Compile };
  _resolveFilename(request: string, parent: Module, isMain: boolean, options?: unknown): string;
  _resolveLookupPaths(request: string, parent: Module): string[] | null;
  _extensions: unknown;
  _cache: unknown;
}
const internals = Module as unknown as Internals;

/** The cache's folder: one per Node.js version and architecture, as V8's code is. */
function cacheFolder(): string {
  const base = process.env.GPU_RENTAL_CACHE ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "gpu-rental");
  return path.join(base, "code-cache", `node-${process.version}-${process.arch}`);
}

/** The `require` a module's code receives, as Node.js makes it (its `main` read now: this file loads before it). */
function requireOf(module: Module): NodeJS.Require {
  const load = ((id: string) => module.require(id)) as NodeJS.Require;
  const resolve = ((request: string, options?: { paths?: string[] }) => internals._resolveFilename(request, module, false, options)) as NodeJS.RequireResolve;
  resolve.paths = (request: string) => internals._resolveLookupPaths(request, module);
  return Object.assign(load, { resolve, main: process.mainModule, extensions: internals._extensions, cache: internals._cache });
}

/** Scripts compiled without usable cached code, by the entry they are to fill. */
class Pending {
  private scripts = new Map<string, vm.Script>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly folder: string) {
    process.once("exit", () => this.write());
  }

  add(entry: string, script: vm.Script): void {
    this.scripts.set(entry, script);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.write(), SETTLE_MS).unref();
  }

  /** Writes every pending entry; an entry that cannot be written is left for a later run. */
  write(): void {
    if (this.scripts.size === 0) return;
    try {
      fs.mkdirSync(this.folder, { recursive: true });
      if (fs.readdirSync(this.folder).length > MAX_ENTRIES) fs.rmSync(this.folder, { recursive: true, force: true });
      fs.mkdirSync(this.folder, { recursive: true });
      for (const [entry, script] of this.scripts) {
        const file = path.join(this.folder, entry);
        const partial = `${file}.${process.pid}.partial`;
        fs.writeFileSync(partial, script.createCachedData());
        fs.renameSync(partial, file);
      }
    } catch {
      // A read-only or full disk: the next run compiles as this one did.
    }
    this.scripts.clear();
  }
}

/** Compiles installed packages' CommonJS modules with cached code, and keeps what it compiles for the next run. */
function install(): void {
  const folder = cacheFolder();
  const pending = new Pending(folder);
  const compile = internals.prototype._compile;
  internals.prototype._compile = function (this: Module, content: string, filename: string, format?: string) {
    // ES modules, a program's own files and code that may import() are Node's to compile.
    if (format === "module" || !filename.includes(`${path.sep}node_modules${path.sep}`) || (IMPORT_CALL.test(content) && !MENTIONS_ONLY.some((end) => filename.endsWith(end)))) {
      return compile.apply(this, [content, filename, format]);
    }
    const entry = `${zlib.crc32(content).toString(16)}-${content.length.toString(16)}`;
    let script: vm.Script;
    try {
      script = new vm.Script(Module.wrap(content), { filename, cachedData: cached(folder, entry) });
    } catch {
      // Not CommonJS after all (a .js file written as an ES module in a package that does not say so): Node's own
      // loader detects it, or reports the error as it would.
      return compile.apply(this, [content, filename, format]);
    }
    if (script.cachedDataRejected !== false) pending.add(entry, script);
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return wrapper.call(this.exports, this.exports, requireOf(this), this, filename, path.dirname(filename));
  };
}

/** An entry's cached code, or undefined when there is none yet. */
function cached(folder: string, entry: string): Buffer | undefined {
  try {
    return fs.readFileSync(path.join(folder, entry));
  } catch {
    return undefined;
  }
}

/** Off when asked, on a Node.js without CRC-32, and under a debugger or a policy (both want Node's own loading). */
const wanted = () =>
  process.env.GPU_RENTAL_CODE_CACHE !== "0" && typeof zlib.crc32 === "function" && !process.execArgv.some((flag) => /^--(inspect|experimental-policy)/.test(flag));

if (wanted()) install();
