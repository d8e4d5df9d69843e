import { spawnSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { userCacheDir } from "../sdk/cache-dir";
import { madeWhole } from "../sdk/made-whole";
import { makeOnce, markUsed, pruneUnused } from "./cache-folders";
import { PACKAGE_ROOT, RELEASE_EXECUTABLE } from "../sdk/package-root";
import { PACKAGE_PLUGIN_DIR, PLUGIN_EXECUTABLE, PLUGIN_NAME } from "../provider/plugin/names";

/** The module of the package whose `main()` serves the plugin (`@pulumi/pulumi`'s `provider.main`); see docs/plugin.md. */
export const PLUGIN_ENTRY = "gpu-rental/plugin";

export interface PluginInstallOptions {
  /** The `pulumi` to install with (its PULUMI_HOME, from `env`, receives the plugin). */
  pulumi: string;
  env: NodeJS.ProcessEnv;
  /** Where progress goes; default stderr. */
  log?: (line: string) => void;
  /**
   * Links the prepared folder's files into the Pulumi home instead of having the engine copy them (CPU
   * saved): for a home that lives shorter than the cache holding the folder (`gpu-rental test`'s throwaway one).
   */
  link?: boolean;
}

export interface InstalledPlugin {
  name: string;
  version: string;
  /** The plugin's folder in the Pulumi home. */
  dir: string;
}

/**
 * `gpu-rental plugin install`: puts the provider plugin of this installed package into the user's Pulumi plugins,
 * as `pulumi plugin install resource gpu-rental <version> --file <folder>` does for any Node.js plugin. The folder
 * is self-contained (preparedPluginFolder), and what is installed depends on nothing of it: its files hard-linked
 * where the Pulumi home is on the cache's file system (some 10,000 links: a tenth of the CPU and none of the disk
 * of a copy), else copied by the engine. Either way the folder the command ran from may be removed, and the cache.
 */
export function installPlugin(options: PluginInstallOptions): InstalledPlugin {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const version = packageVersion(PACKAGE_ROOT);
  const folder = preparedPluginFolder(log);
  const dir = path.join(pulumiHome(options.env), "plugins", `resource-${PLUGIN_NAME}-v${version}`);
  // The release's executable run from the very folder (the engine downloaded it there): installed already.
  const there = fs.existsSync(dir) && fs.realpathSync(folder) === fs.realpathSync(dir);
  if (!there && !(options.link ? linkPluginFolder(folder, dir) : hardLinkedPluginFolder(folder, dir))) {
    log(`gpu-rental plugin install: pulumi plugin install resource ${PLUGIN_NAME} v${version} --file ${folder}`);
    const args = ["plugin", "install", "resource", PLUGIN_NAME, `v${version}`, "--file", folder, "--reinstall", "--non-interactive"];
    const result = spawnSync(options.pulumi, args, { env: options.env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    if (result.status !== 0) {
      throw new Error(`pulumi ${args.join(" ")} failed (exit ${result.status}):\n${`${result.stdout}${result.stderr}`.trim()}`);
    }
  }
  if (!fs.existsSync(path.join(dir, PLUGIN_EXECUTABLE))) throw new Error(`pulumi plugin install reported success, but ${dir} holds no plugin`);
  log(`gpu-rental plugin install: installed in ${dir}`);
  return { name: PLUGIN_NAME, version, dir };
}

/**
 * A plugin folder as the engine finds one in a Pulumi home (a real folder: it skips links to folders), its entries
 * links to `folder`'s; false where links cannot be made (Windows without the right), with nothing left half-made.
 */
function linkPluginFolder(folder: string, dir: string): boolean {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  try {
    for (const entry of fs.readdirSync(folder)) fs.symlinkSync(path.join(folder, entry), path.join(dir, entry));
    return true;
  } catch {
    fs.rmSync(dir, { recursive: true, force: true });
    return false;
  }
}

/**
 * `folder`'s tree made again at `dir` of hard links to its files (links as links), in a stage beside it renamed into
 * place, so the engine never finds it half made; false where files cannot be linked there (another file system),
 * with nothing left.
 */
function hardLinkedPluginFolder(folder: string, dir: string): boolean {
  try {
    madeWhole(dir, (stage) => hardLinkTree(folder, stage), { replace: true });
    return true;
  } catch {
    return false;
  }
}

/** `folder`'s tree made again in the empty folder `to`: its folders as folders, links as links, files hard-linked. */
function hardLinkTree(folder: string, to: string): void {
  for (const entry of fs.readdirSync(folder, { recursive: true, withFileTypes: true })) {
    const from = path.join(entry.parentPath, entry.name);
    const at = path.join(to, path.relative(folder, from));
    if (entry.isDirectory()) fs.mkdirSync(at, { recursive: true });
    else if (entry.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), at);
    else fs.linkSync(from, at);
  }
}

/**
 * The plugin folder. In the release's executable, the folder it runs from, as its archive unpacks (the plugin is the
 * executable itself). In the npm package, made once per package content and kept in the cache (~/.cache/gpu-rental,
 * or $GPU_RENTAL_CACHE): the plugin executable (a shim that runs node on index.js), this package packed into it as
 * a tarball, a package.json that depends on that tarball and on the @pulumi/pulumi in use, and their node_modules.
 * npm's install is the slow part (a minute); later installs, into any Pulumi home, copy the folder (or link it, `link`).
 */
export function preparedPluginFolder(log: (line: string) => void): string {
  if (RELEASE_EXECUTABLE) return path.dirname(RELEASE_EXECUTABLE);
  const cache = userCacheDir();
  fs.mkdirSync(cache, { recursive: true });
  const pulumiSdk = pulumiVersion();
  const key = packageContent().update(pulumiSdk).digest("hex").slice(0, 12);
  const folder = path.join(cache, `plugin-${PLUGIN_NAME}-v${packageVersion(PACKAGE_ROOT)}-${key}`);
  // Made once however many installs want it at once (tests, CI jobs); a folder already made is used as it is.
  const made = () => {
    if (!complete(folder)) return undefined;
    markUsed(folder);
    return folder;
  };
  return makeOnce(folder, made, () => makePluginFolder(cache, folder, pulumiSdk, log));
}

/**
 * Makes the plugin folder in a stage beside it, then puts it in place at once, in the place of an incomplete one a
 * killed maker left.
 */
function makePluginFolder(cache: string, folder: string, pulumiSdk: string, log: (line: string) => void): string {
  // A new content: the folders of contents not used for two hours go (a plugin's folder is large).
  pruneUnused(cache, `plugin-${PLUGIN_NAME}-v`);
  return madeWhole(
    folder,
    (stage) => {
      const tarball = packInto(stage);
      log(`gpu-rental plugin install: preparing the plugin folder (npm installs gpu-rental and @pulumi/pulumi ${pulumiSdk} into it; once per version)`);
      writePluginFolder(stage, packageVersion(PACKAGE_ROOT), tarball, pulumiSdk);
      // No install scripts: gpu-rental's own tree has none (ssh2 comes bundled), and @pulumi/pulumi's one (protobufjs's
      // check of its own version) is nothing the plugin needs.
      const npm = spawnSync("npm", ["install", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: stage, encoding: "utf8" });
      if (npm.status !== 0) throw new Error(`npm install of the plugin's dependencies failed (exit ${npm.status}):\n${npm.stderr}`);
    },
    { replace: true },
  );
}

const complete = (folder: string) => fs.existsSync(path.join(folder, "node_modules", ".package-lock.json"));

/** The plugin folder's files: the engine runs its executable, the package's own shim, which runs node on index.js. */
function writePluginFolder(dir: string, version: string, tarball: string, pulumiSdk: string): void {
  for (const shim of [PLUGIN_EXECUTABLE, `${PLUGIN_EXECUTABLE}.cmd`]) fs.copyFileSync(path.join(PACKAGE_PLUGIN_DIR, shim), path.join(dir, shim));
  fs.chmodSync(path.join(dir, PLUGIN_EXECUTABLE), 0o755);
  const manifest = {
    name: `pulumi-resource-${PLUGIN_NAME}`,
    version,
    private: true,
    description: "The gpu-rental Pulumi provider plugin, installed by `gpu-rental plugin install`.",
    main: "index.js",
    dependencies: { "@pulumi/pulumi": pulumiSdk, "gpu-rental": `file:${tarball}` },
  };
  fs.writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  fs.writeFileSync(path.join(dir, "index.js"), `"use strict";\nrequire(${JSON.stringify(PLUGIN_ENTRY)}).main();\n`);
  // The plugin's own npm settings: take packages from npm's cache where it has them; no audit or funding notes.
  fs.writeFileSync(path.join(dir, ".npmrc"), "prefer-offline=true\naudit=false\nfund=false\nupdate-notifier=false\n");
}

/**
 * A hash of what `npm pack` would put in the package (publishedFiles): a prepared plugin folder is found again
 * without packing (a second of CPU).
 */
export function packageContent(): crypto.Hash {
  const hash = crypto.createHash("sha256");
  for (const file of publishedFiles()) hash.update(`${file}\0`).update(fs.readFileSync(path.join(PACKAGE_ROOT, file))).update("\0");
  return hash;
}

/**
 * The package's files as `npm pack` takes them (package.json and what its `files` names, less what its `!` patterns
 * name), read here rather than packed: paths relative to the package's folder, `/`-separated, sorted.
 */
export function publishedFiles(): string[] {
  const { files } = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")) as { files: string[] };
  const under = (dir: string): string[] => {
    const full = path.join(PACKAGE_ROOT, dir);
    if (!fs.existsSync(full)) return [];
    if (!fs.statSync(full).isDirectory()) return [dir];
    return fs.readdirSync(full, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => path.relative(PACKAGE_ROOT, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"));
  };
  // A pattern names the files under its folder part that it matches; a plain entry, a file or all of a folder.
  const named = (entry: string): string[] => (entry.includes("*") ? under(entry.slice(0, entry.indexOf("*")).replace(/\/[^/]*$/, "")).filter((file) => globPattern(entry).test(file)) : under(entry));
  const excluded = files.filter((entry) => entry.startsWith("!")).map((entry) => globPattern(entry.slice(1)));
  const included = ["package.json", ...files.filter((entry) => !entry.startsWith("!")).flatMap(named)];
  return [...new Set(included)].filter((file) => !excluded.some((pattern) => pattern.test(file))).sort();
}

/** A `files` pattern of package.json (`*` within a name, `**\/` any folders) as a test of a `/`-separated path. */
function globPattern(pattern: string): RegExp {
  const escape = (text: string) => text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  const source = pattern.split("**/").map((part) => part.split("*").map(escape).join("[^/]*")).join("(?:.*/)?");
  return new RegExp(`^${source}$`);
}

/** `npm pack` of this package (its files as published; no build scripts run) into `dir`; the tarball's name. */
function packInto(dir: string): string {
  const result = spawnSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], { cwd: PACKAGE_ROOT, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`npm pack of ${PACKAGE_ROOT} failed: ${result.stderr}`);
  return JSON.parse(result.stdout)[0].filename;
}

/**
 * The @pulumi/pulumi version beside this package (a peer dependency), pinned so the plugin runs the same one; with
 * none beside it (`npx gpu-rental` in an empty folder), the version this package is built and tested with.
 */
function pulumiVersion(): string {
  try {
    return packageVersion(path.dirname(require.resolve("@pulumi/pulumi/package.json", { paths: [process.cwd(), PACKAGE_ROOT] })));
  } catch {
    return JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")).devDependencies["@pulumi/pulumi"];
  }
}

function packageVersion(dir: string): string {
  return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
}

function pulumiHome(env: NodeJS.ProcessEnv): string {
  return env.PULUMI_HOME || path.join(os.homedir(), ".pulumi");
}
