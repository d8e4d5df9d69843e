import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { ensurePythonEnv } from "./toolchain";

/** A project's runtime as Pulumi.yaml declares it (`runtime: python` or `runtime: {name, options}`). */
export interface ProjectRuntime {
  name: string;
  options: Record<string, unknown>;
}

export function runtimeOf(settings: { runtime?: string | { name: string; options?: object } }): ProjectRuntime {
  const runtime = settings.runtime ?? "";
  return typeof runtime === "string" ? { name: runtime, options: {} } : { name: runtime.name, options: { ...runtime.options } };
}

/**
 * Makes the virtual environment that a Python program's Pulumi.yaml names (`options.virtualenv`) when it does not
 * exist yet: `python3 -m venv --without-pip` plus a .pth file that puts the cached environment with the engine's
 * `pulumi` package (and pip) on its path. It takes half a second where a fresh `pip install pulumi` takes a
 * minute; what the program installs afterwards (its generated SDK, its own requirements) goes into its own
 * environment. Returns the folder, or undefined when the program names none (the engine then uses the ambient
 * Python) or has one already.
 */
export function makeVirtualEnv(programDir: string, runtime: ProjectRuntime): string | undefined {
  const option = runtime.options.virtualenv;
  if (runtime.name !== "python" || typeof option !== "string" || !option) return undefined;
  const venv = path.resolve(programDir, option);
  if (fs.existsSync(path.join(venv, "bin", "python"))) return undefined;
  const shared = ensurePythonEnv();
  const made = spawnSync("python3", ["-m", "venv", "--without-pip", venv], { stdio: ["ignore", "inherit", "inherit"] });
  if (made.status !== 0) throw new Error(`python3 -m venv ${venv} failed (exit ${made.status}); on Debian: apt-get install python3-venv.`);
  const sitePackages = spawnSync(path.join(venv, "bin", "python"), ["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], { encoding: "utf8" });
  if (sitePackages.status !== 0) throw new Error(`the new virtual environment ${venv} does not run: ${sitePackages.stderr}`);
  fs.writeFileSync(path.join(sitePackages.stdout.trim(), "gpu-rental-pulumi.pth"), `${shared}\n`);
  return venv;
}
