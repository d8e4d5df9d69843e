import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { isAlive } from "../../emulator/storage/store";
import { userCacheDir } from "../../emulator";

const run = promisify(execFile);

/**
 * Python tools the tests drive (the service's public client `vastai`, schemathesis), each in a virtual
 * environment that the tests create on first use and keep in the cache (`GPU_RENTAL_CACHE`, else
 * `~/.cache/gpu-rental/`), named by a hash of its requirements and of the Python that made it: a CI machine
 * builds it once, a changed pin builds a new one. Nothing is installed by hand.
 */

export interface Python {
  command: string;
  version: string;
}

/** The Python 3 on PATH, or why there is none (the one reason the Python-driven suites skip). */
export function findPython(): Python | { missing: string } {
  for (const command of ["python3", "python"]) {
    const probe = spawnSync(command, ["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], { encoding: "utf8" });
    const version = probe.status === 0 ? probe.stdout.trim() : "";
    if (version.startsWith("3.")) return { command, version };
  }
  return { missing: "no Python 3 on PATH (tried python3 and python)" };
}

export interface Venv {
  dir: string;
  /** The path of a program the environment installed (`vastai`, `st`). */
  bin(name: string): string;
}

const CACHE = userCacheDir();
const COMPLETE = ".gpu-rental-complete";
const WAIT_MS = 15 * 60_000;

/**
 * The environment with `requirements` installed (pinned `name==version` lines), built if the cache has none.
 * Two test workers asking at once build it once: the first takes a lock folder beside it (holding its pid),
 * the other waits for the build to complete; the lock of a process that died is taken over. A build that
 * fails leaves nothing behind and fails the caller, with pip's own words.
 */
export async function venv(name: string, python: Python, requirements: readonly string[]): Promise<Venv> {
  const key = createHash("sha256").update(`${python.version}\n${requirements.join("\n")}`).digest("hex").slice(0, 16);
  const dir = path.join(CACHE, `venv-${name}-${key}`);
  const result: Venv = { dir, bin: (program) => path.join(dir, process.platform === "win32" ? "Scripts" : "bin", program) };
  if (fs.existsSync(path.join(dir, COMPLETE))) return result;
  fs.mkdirSync(CACHE, { recursive: true });
  const lock = `${dir}.lock`;
  const deadline = Date.now() + WAIT_MS;
  while (!takeLock(lock)) {
    if (fs.existsSync(path.join(dir, COMPLETE))) return result;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${lock} (held by another build for 15 minutes)`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  try {
    if (fs.existsSync(path.join(dir, COMPLETE))) return result;
    fs.rmSync(dir, { recursive: true, force: true });
    process.stderr.write(`gpu-rental tests: building the Python environment ${dir} (${requirements.join(", ")}); later runs reuse it\n`);
    await step([python.command, "-m", "venv", dir], `${python.command} -m venv`);
    const pip = [result.bin("python"), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet", ...requirements];
    await step(pip, `pip install ${requirements.join(" ")}`);
    fs.writeFileSync(path.join(dir, COMPLETE), `${requirements.join("\n")}\n`);
    return result;
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

async function step(command: string[], what: string): Promise<void> {
  try {
    await run(command[0], command.slice(1), { timeout: WAIT_MS, maxBuffer: 16 << 20 });
  } catch (error) {
    const { stderr, stdout, message } = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${what} failed: ${(stderr || stdout || message).trim().split("\n").slice(-15).join("\n")}`);
  }
}

/** Takes the lock folder, or takes it over from a process that died; false while a live process holds it. */
function takeLock(lock: string): boolean {
  try {
    fs.mkdirSync(lock);
    fs.writeFileSync(path.join(lock, "pid"), String(process.pid));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const holder = Number(readOr(path.join(lock, "pid"), "0"));
    if (holder && !isAlive(holder)) {
      fs.rmSync(lock, { recursive: true, force: true });
      return takeLock(lock);
    }
    return false;
  }
}

function readOr(file: string, fallback: string): string {
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    return fallback;
  }
}

/**
 * A Python of at least 3.`minor` (the vendor's deployment client needs 3.12): `python3.<n>` on PATH, else a pyenv
 * version, else why there is none.
 */
export function findPythonAtLeast(minor: number): Python | { missing: string } {
  const pyenv = path.join(process.env.PYENV_ROOT ?? path.join(process.env.HOME ?? "", ".pyenv"), "versions");
  const versions = fs.existsSync(pyenv) ? fs.readdirSync(pyenv).filter((v) => /^3\.\d+\.\d+$/.test(v) && Number(v.split(".")[1]) >= minor).sort() : [];
  const candidates = [...[13, 12].filter((n) => n >= minor).map((n) => `python3.${n}`), ...versions.map((v) => path.join(pyenv, v, "bin", "python3"))];
  for (const command of candidates) {
    const probe = spawnSync(command, ["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], { encoding: "utf8" });
    const version = probe.status === 0 ? probe.stdout.trim() : "";
    if (version.startsWith("3.") && Number(version.split(".")[1]) >= minor) return { command, version };
  }
  return { missing: `no Python 3.${minor} or later (tried ${candidates.join(", ")})` };
}
