import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

/** The folder of gpu-rental's package.json, from its sources (tests) or its compiled dist/ alike. */
export const PACKAGE_ROOT = findPackageRoot(__dirname);

function findPackageRoot(from: string): string {
  for (let dir = from; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json");
    if (fs.existsSync(manifest) && JSON.parse(fs.readFileSync(manifest, "utf8")).name === "gpu-rental") return dir;
  }
  throw new Error(`gpu-rental's package.json not found above ${from}`);
}

/** A provider plugin built here because the engine could not download it. */
export interface LocalPlugin {
  name: string;
  version: string;
  file: string;
}

export interface Toolchain {
  /** The folder holding `pulumi`, its Node.js language host and the dynamic-provider script. */
  bin: string;
  /** Plugins to install into the Pulumi home in use (`pulumi plugin install --file`). */
  plugins: LocalPlugin[];
}

let prepared: Toolchain | undefined;

/**
 * The toolchain a parent process prepared, handed down in the environment: the script hashes every source it
 * builds from (some 0.4 s of CPU), which a `gpu-rental test` started by a `gpu-rental` or a test run need not
 * do again. Trusted only while its files are there.
 */
const INHERITED = "GPU_RENTAL_TOOLCHAIN";

/**
 * Runs `tools/pulumi-toolchain.sh` once per process tree (it prints its progress on stderr): a `pulumi` of the
 * user's own on PATH, or one built and cached from Go modules, with Pulumi's official Node.js language host.
 * `inherit: false` runs the script even so (`gpu-rental toolchain`: a user asking to find or build it).
 */
export function ensureToolchain(options: { inherit?: boolean } = {}): Toolchain {
  if (prepared) return prepared;
  prepared = options.inherit === false ? undefined : inherited();
  if (prepared) return prepared;
  const script = path.join(PACKAGE_ROOT, "tools", "pulumi-toolchain.sh");
  const result = spawnSync("bash", [script], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  if (result.status !== 0) throw new Error(`The Pulumi toolchain could not be prepared (${script} exited ${result.status}).`);
  const [bin, pluginDir] = result.stdout.split("\n");
  prepared = { bin, plugins: pluginDir ? [pluginIn(pluginDir)] : [] };
  process.env[INHERITED] = JSON.stringify(prepared);
  return prepared;
}

function inherited(): Toolchain | undefined {
  try {
    const toolchain = JSON.parse(process.env[INHERITED] ?? "") as Toolchain;
    const files = [path.join(toolchain.bin, "pulumi"), ...toolchain.plugins.map((plugin) => plugin.file)];
    return files.every((file) => fs.existsSync(file)) ? toolchain : undefined;
  } catch {
    return undefined;
  }
}

/** The plugin in a cache folder named `<name>-v<version>-<key>` holding `pulumi-resource-<name>`. */
function pluginIn(dir: string): LocalPlugin {
  const match = /^(.+)-v(\d+\.\d+\.\d+)-[0-9a-f]+$/.exec(path.basename(dir));
  if (!match) throw new Error(`Unexpected plugin folder from the toolchain: ${dir}`);
  return { name: match[1], version: match[2], file: path.join(dir, `pulumi-resource-${match[1]}`) };
}

let pythonEnv: string | undefined;

/**
 * The site-packages folder of the cached Python environment holding `pulumi` of the engine's version
 * (`tools/python-env.sh`: made once from PyPI, then reused); once per process.
 */
export function ensurePythonEnv(): string {
  if (pythonEnv) return pythonEnv;
  const script = path.join(PACKAGE_ROOT, "tools", "python-env.sh");
  const result = spawnSync("bash", [script], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  if (result.status !== 0) throw new Error(`The Python environment for Python programs could not be prepared (${script} exited ${result.status}).`);
  pythonEnv = result.stdout.trim();
  return pythonEnv;
}
