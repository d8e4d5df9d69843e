import { execFile } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { userCacheDir } from "../../sdk/cache-dir";
import { madeWhole } from "../../sdk/made-whole";
import { REPO_ROOT, removeTree } from "./paths";

const run = promisify(execFile);

/** The package as `npm pack` made it for this test run (test/helpers/global-setup.js). */
export function tarball(): string {
  const file = process.env.GPU_RENTAL_TARBALL;
  if (!file || !fs.existsSync(file)) throw new Error("GPU_RENTAL_TARBALL is not set: run the tests through jest's global setup (npm test)");
  return file;
}

/**
 * Work made once per test run and shared by every test that needs it (an `npm install` of a kind of program, a
 * Python environment, a generated SDK): `make(dir)` runs at most once per `key` in the whole run, across jest's
 * workers, into a folder under GPU_RENTAL_INSTALLS (made by test/helpers/global-setup.js, removed at its
 * teardown); everyone else waits for it and gets the same folder. Treat the folder as read-only: copy it
 * (`linkCopy`) or use it in place. A `make` that fails leaves nothing, and the next caller tries again.
 */
export function sharedOnce(key: string, make: (dir: string) => Promise<void>): Promise<string> {
  const root = process.env.GPU_RENTAL_INSTALLS;
  if (!root) throw new Error("GPU_RENTAL_INSTALLS is not set: run the tests through jest's global setup (npm test)");
  const id = crypto.createHash("sha256").update(key).digest("hex").slice(0, 16);
  let made = madeHere.get(id);
  if (!made) {
    made = makeOnce(path.join(root, id), make);
    madeHere.set(id, made);
    made.catch(() => madeHere.delete(id));
  }
  return made;
}

/**
 * Programs are installed without dependencies' install scripts, as npm 11 may install them: the package must not
 * need one (ssh2's native crypto, the one script in its tree, is optional). It also saves compiling that C++ in
 * every install. The README, Python and YAML tests install as their docs say, with npm's defaults (scripts run).
 */
const NO_SCRIPTS = ["--ignore-scripts"];

const madeHere = new Map<string, Promise<string>>();

/** What of a package.json `npm install` reads (besides workspaces, which are installed in place). */
const DEPENDENCY_FIELDS = ["dependencies", "devDependencies", "optionalDependencies", "peerDependencies", "overrides"];

/** One maker across processes: whoever creates `<dir>.lock` makes `<dir>` (whole, then renamed: madeWhole); others poll. */
async function makeOnce(dir: string, make: (dir: string) => Promise<void>): Promise<string> {
  const deadline = Date.now() + 15 * 60_000;
  while (Date.now() < deadline) {
    if (fs.existsSync(dir)) return dir;
    try {
      fs.mkdirSync(`${dir}.lock`);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250)); // another worker is making it
      continue;
    }
    try {
      return await madeWhole(dir, make);
    } finally {
      fs.rmSync(`${dir}.lock`, { recursive: true, force: true });
    }
  }
  throw new Error(`${dir} was not made within 15 minutes`);
}

/** Copies a folder made by sharedOnce into `to`, files as hard links (instant; npm replaces files, never edits them). */
export async function linkCopy(from: string, to: string): Promise<void> {
  fs.mkdirSync(to, { recursive: true });
  await run("cp", ["-al", `${from}/.`, to]);
}

/**
 * A user's program in a folder of its own outside the repository, with the packed package installed by npm
 * the way a user installs it. Nothing of the repository is visible from there.
 */
export class UserProgram {
  private constructor(readonly dir: string) {}

  /**
   * A new program from `files`, with `packages` installed as its dependencies and `devPackages` as its
   * devDependencies (`name@range`; `gpu-rental` stands for the packed tarball, a `.tgz` path for a gpu-rental
   * tarball of another release).
   */
  static async create(name: string, files: Record<string, string>, packages: string[], devPackages: string[] = []): Promise<UserProgram> {
    const program = new UserProgram(fs.mkdtempSync(path.join(os.tmpdir(), `gpu-rental-${name}-`)));
    const ownManifests = Object.keys(files).some((file) => path.basename(file) === "package.json");
    program.write({ "package.json": JSON.stringify({ name, version: "1.0.0", private: true }, null, 2), ...files });
    const args = packages.map((p) => (p === "gpu-rental" ? tarball() : p));
    // A workspace (package.json files of its own) is installed in place; a plain program gets the run's shared install.
    if (ownManifests) await program.npm("install", ...args, ...NO_SCRIPTS);
    else await program.installShared({ dependencies: rangesOf(packages), devDependencies: rangesOf(devPackages) });
    return program;
  }

  /** A copy of `examples/<name>`, installed as its README says, with the packed package for `gpu-rental`. */
  static async fromExample(name: string): Promise<UserProgram> {
    const program = new UserProgram(fs.mkdtempSync(path.join(os.tmpdir(), `gpu-rental-example-${name}-`)));
    fs.cpSync(path.join(REPO_ROOT, "examples", name), program.dir, { recursive: true });
    await program.installShared({});
    return program;
  }

  /**
   * What `npm install` makes in this folder (package.json, package-lock.json, node_modules) when its package.json
   * declares what it does plus `added`, `gpu-rental` being the packed tarball (as `npm install <tarball>` would
   * save it). Installed once per run for each set of declarations, whichever program asks (an example declaring
   * them, a test adding them), and copied here with the files that name the program made its own.
   */
  private async installShared(added: Partial<Record<string, Record<string, string>>>): Promise<void> {
    const manifest = JSON.parse(fs.readFileSync(path.join(this.dir, "package.json"), "utf8"));
    const declared = declarations(manifest, added);
    const installed = await sharedOnce(JSON.stringify({ kind: "npm install", declared }), (dir) => installFromBase(dir, declared));
    for (const file of ["package.json", "package-lock.json"]) fs.rmSync(path.join(this.dir, file), { force: true });
    await linkCopy(installed, this.dir);
    // The files that name the program are its own copies (not links), with npm's relative `file:` paths (to the
    // tarballs) made from here; npm's hidden lock file is rewritten last, so that it is newer than the folders it
    // describes, as after an install.
    const tarballs = Object.values(declared).flatMap((ranges) => Object.values(ranges)).filter(isFileRange);
    const rewrite = (file: string, change: (json: any) => any) => {
      const full = path.join(this.dir, file);
      if (!fs.existsSync(full)) return;
      let text = fs.readFileSync(full, "utf8");
      for (const spec of tarballs) {
        const from = (dir: string) => JSON.stringify(`file:${path.relative(dir, spec.slice("file:".length))}`);
        text = text.split(from(installed)).join(from(this.dir));
      }
      writeOwn(full, `${JSON.stringify(change(JSON.parse(text)), null, 2)}\n`);
    };
    rewrite("package.json", (saved) => ({ ...manifest, ...Object.fromEntries(DEPENDENCY_FIELDS.filter((f) => saved[f]).map((f) => [f, saved[f]])) }));
    for (const file of LOCK_FILES) {
      rewrite(file, (lock) => {
        Object.assign(lock, { name: manifest.name, version: manifest.version });
        if (lock.packages?.[""]) Object.assign(lock.packages[""], { name: manifest.name, version: manifest.version });
        return lock;
      });
    }
  }

  write(files: Record<string, string>): void {
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(this.dir, file)), { recursive: true });
      fs.writeFileSync(path.join(this.dir, file), text);
    }
  }

  /** Runs npm in the program's folder, offline where the cache allows. */
  async npm(...args: string[]): Promise<string> {
    return this.npmWith({}, ...args);
  }

  npmWith(env: Record<string, string>, ...args: string[]): Promise<string> {
    return npmIn(this.dir, env, args);
  }

  /** Every copy of @pulumi/pulumi installed in the program's tree (a program must hold exactly one). */
  pulumiCopies(): string[] {
    const copies: string[] = [];
    const visit = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory()) continue;
        const full = path.join(dir, entry.name);
        if (full.endsWith(path.join("@pulumi", "pulumi")) && fs.existsSync(path.join(full, "package.json"))) copies.push(full);
        visit(full);
      }
    };
    visit(path.join(this.dir, "node_modules"));
    return copies;
  }

  remove(): void {
    removeTree(this.dir);
  }
}

/**
 * `npm install` of `declared` into `dir`, started from the tree an earlier run installed for the same
 * declarations on this machine (a base, kept in the user's cache for BASE_DAYS): the run's tarball differs from
 * that run's, so npm replaces gpu-rental alone (a fraction of a fresh install's CPU), as in a user's project that
 * upgrades it. Without a base (a fresh machine, as CI's) it is a fresh install, which is then kept as the base.
 */
async function installFromBase(dir: string, declared: Record<string, Record<string, string>>): Promise<void> {
  const base = path.join(userCacheDir(), "test-installs", baseKey(declared));
  const reused = isCurrent(base) && (await copiedFrom(base, dir));
  const relative = withFileSpecs(declared, (file) => `file:${path.relative(dir, file)}`);
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "program", version: "1.0.0", private: true, ...relative }, null, 2));
  await npmIn(dir, {}, ["install", ...NO_SCRIPTS]);
  if (!reused) await keepAsBase(dir, base);
}

/** A base made less than BASE_DAYS ago (its package.json is written once, when it is made). */
function isCurrent(base: string): boolean {
  const made = fs.statSync(path.join(base, "package.json"), { throwIfNoEntry: false })?.mtimeMs;
  return made !== undefined && Date.now() - made < BASE_DAYS * DAY_MS;
}

/**
 * `base` copied into `dir` (hard links), less its package.json; false, with `dir` left empty, when the base went
 * away meanwhile (another run on this machine replaced it).
 */
async function copiedFrom(base: string, dir: string): Promise<boolean> {
  try {
    await linkCopy(base, dir);
    // npm writes its lock files in place: the copy's are its own, not links to the base's.
    for (const file of LOCK_FILES) {
      const full = path.join(dir, file);
      if (fs.existsSync(full)) writeOwn(full, fs.readFileSync(full)); // a program that declares nothing has no node_modules
    }
    fs.rmSync(path.join(dir, "package.json"));
    return true;
  } catch {
    removeTree(dir);
    fs.mkdirSync(dir);
    return false;
  }
}

/** Writes `file` anew: where it was a hard link to a shared copy, the copy is left as it was. */
function writeOwn(file: string, content: string | Buffer): void {
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, content);
}

/** npm in `dir`, offline where the cache allows. */
async function npmIn(dir: string, env: Record<string, string>, args: string[]): Promise<string> {
  const { stdout } = await run("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
    cwd: dir,
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** How long a base serves before a fresh install replaces it (so the bases follow the registry's newer releases). */
const BASE_DAYS = 7;
const DAY_MS = 86_400_000;
const LOCK_FILES = ["package-lock.json", path.join("node_modules", ".package-lock.json")];

/**
 * The name of the base of `declared`: the run's tarball stands for what it depends on (the repository's
 * declarations), another tarball for its contents; Node's and npm's versions too, as the tree depends on them.
 */
function baseKey(declared: Record<string, Record<string, string>>): string {
  const own = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"));
  const ownDependencies = JSON.stringify([own.dependencies, own.peerDependencies, own.optionalDependencies]);
  const named = withFileSpecs(declared, (file) =>
    file === tarball() ? `packed:${ownDependencies}` : `tarball:${crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex")}`,
  );
  const key = JSON.stringify({ named, node: process.version, npm: process.env.npm_config_user_agent ?? "" });
  return crypto.createHash("sha256").update(key).digest("hex").slice(0, 16);
}

/**
 * Keeps `dir` as the base at `base` (a hard-linked copy made whole beside it, renamed into place: madeWhole),
 * unless another run made one meanwhile, and drops bases past their days. A base is only a saving: failing to keep
 * one fails nothing.
 */
async function keepAsBase(dir: string, base: string): Promise<void> {
  try {
    if (!isCurrent(base)) {
      removeTree(base);
      await madeWhole(base, (stage) => linkCopy(dir, stage));
    }
    // Another worker's stage, still being made, is left alone (one a crash left, a day later).
    const bases = path.dirname(base);
    for (const name of fs.readdirSync(bases)) {
      const full = path.join(bases, name);
      if (name.includes(".partial-") ? Date.now() - fs.statSync(full).mtimeMs > DAY_MS : !isCurrent(full)) removeTree(full);
    }
  } catch {
    // Another run renamed its own into place first, or the disk is full: the next run installs afresh.
  }
}

/** `name@range` as npm's command line takes it, as package.json declares it; `gpu-rental` and `.tgz` paths are gpu-rental tarballs. */
function rangesOf(packages: string[]): Record<string, string> {
  return Object.fromEntries(
    packages.map((arg) => {
      if (arg === "gpu-rental") return ["gpu-rental", `file:${tarball()}`];
      if (arg.endsWith(".tgz")) return ["gpu-rental", `file:${path.resolve(arg)}`];
      const at = arg.lastIndexOf("@");
      if (at <= 0) throw new Error(`${arg}: give a range (name@range), as a program's package.json would`);
      return [arg.slice(0, at), arg.slice(at + 1)];
    }),
  );
}

/**
 * A program's dependency declarations with `added` merged in, and gpu-rental (declared by an example as a
 * registry range) the packed tarball, by absolute path: the same declarations give the same install.
 */
function declarations(manifest: Record<string, any>, added: Partial<Record<string, Record<string, string>>>): Record<string, Record<string, string>> {
  const declared: Record<string, Record<string, string>> = {};
  for (const field of DEPENDENCY_FIELDS) {
    const ranges: Record<string, string> = { ...manifest[field], ...added[field] };
    if (typeof ranges["gpu-rental"] === "string" && !ranges["gpu-rental"].startsWith("file:")) ranges["gpu-rental"] = `file:${tarball()}`;
    // Sorted, as npm writes them: the same declarations in another order are the same install.
    if (Object.keys(ranges).length) declared[field] = Object.fromEntries(Object.entries(ranges).sort(([a], [b]) => a.localeCompare(b)));
  }
  return declared;
}

/** `declared` with each `file:` range rewritten by `spec` (the absolute tarball path given). */
function withFileSpecs(declared: Record<string, Record<string, string>>, spec: (file: string) => string): Record<string, Record<string, string>> {
  return Object.fromEntries(
    Object.entries(declared).map(([field, ranges]) => [
      field,
      Object.fromEntries(Object.entries(ranges).map(([name, range]) => [name, isFileRange(range) ? spec(range.slice("file:".length)) : range])),
    ]),
  );
}

function isFileRange(range: unknown): range is string {
  return typeof range === "string" && range.startsWith("file:");
}
