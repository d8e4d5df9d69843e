import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { userCacheDir } from "../../sdk/cache-dir";
import { madeWhole } from "../../sdk/made-whole";

const run = promisify(execFile);

/**
 * The worker program a deployment's image runs (docs/service-facts.md#deployments): the service's images hold the
 * vendor's published client, whose `serve_deployment` fetches the bundle and serves its functions. The emulator
 * pulls no image; it installs that package once from PyPI into a virtual environment, kept in the user's cache,
 * and binds it read-only into each deployment worker, with the Python that made it where the machines do not see
 * it already (a Python of the user's home: bound at its own path). The worker program needs a Python whose
 * `tarfile` has extraction filters (3.12, or 3.11.4 and later): this computer's system one if it has them, else the
 * first such Python of `GPU_RENTAL_WORKER_PYTHON`, `/usr/local/bin/python3`, pyenv's versions.
 */
export const WORKER_PACKAGE = "vastai==1.9.1";

export interface WorkerSdk {
  /** The environment's folder. */
  folder: string;
  /** This computer's folders the machine needs besides (the interpreter's own), each bound at its own path. */
  extra: string[];
}

let making: Promise<WorkerSdk> | undefined;

/** The environment, made on first use (the same for every emulator of this computer). */
export function workerSdk(): Promise<WorkerSdk> {
  making ??= make().catch((error) => {
    making = undefined;
    throw error;
  });
  return making;
}

async function make(): Promise<WorkerSdk> {
  const python = await findPython();
  const key = createHash("sha256").update(`${python.executable}\n${python.version}\n${WORKER_PACKAGE}`).digest("hex").slice(0, 12);
  const folder = path.join(userCacheDir(), `deployment-worker-${key}`);
  const extra = python.prefix.startsWith("/usr/") ? [] : [python.prefix];
  if (fs.existsSync(path.join(folder, "bin", "python"))) return { folder, extra };
  await madeWhole(folder, async (stage) => {
    await step([python.executable, "-m", "venv", stage]);
    await step([path.join(stage, "bin", "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input", WORKER_PACKAGE]);
  });
  return { folder, extra };
}

async function findPython(): Promise<{ executable: string; prefix: string; version: string }> {
  const pyenv = path.join(process.env.PYENV_ROOT ?? path.join(os.homedir(), ".pyenv"), "versions");
  const versions = fs.existsSync(pyenv) ? fs.readdirSync(pyenv).filter((v) => /^3\.(1[2-9]|[2-9]\d)\.\d+$/.test(v)).sort().map((v) => path.join(pyenv, v, "bin", "python3")) : [];
  const candidates = [process.env.GPU_RENTAL_WORKER_PYTHON, "/usr/bin/python3", "/usr/local/bin/python3", ...versions].filter((c): c is string => !!c && fs.existsSync(c));
  for (const candidate of candidates) {
    try {
      const { stdout } = await run(candidate, ["-c", "import sys, tarfile; assert hasattr(tarfile, 'data_filter'); print(sys.executable); print(sys.base_prefix); print(sys.version.split()[0])"]);
      const [executable, prefix, version] = stdout.trim().split("\n");
      return { executable, prefix, version };
    } catch {
      // Too old (no extraction filters): the next one.
    }
  }
  throw new Error(`a deployment's worker program needs Python 3.12 (or 3.11.4 and later); none found among ${candidates.join(", ") || "the usual places"}: set GPU_RENTAL_WORKER_PYTHON`);
}

async function step([file, ...args]: string[]): Promise<void> {
  try {
    await run(file, args, { maxBuffer: 16 << 20, timeout: 15 * 60_000 });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`installing the deployment worker's ${WORKER_PACKAGE} failed (${[file, ...args].join(" ")}): ${(stderr || (error as Error).message).slice(-2000)}`);
  }
}
