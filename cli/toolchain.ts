import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { userCacheDir } from "../sdk/cache-dir";
import { PACKAGE_ROOT } from "../sdk/package-root";
import { pruneUnused } from "./cache-folders";

/** The runtimes whose programs the toolchain can run (a language host each, beside `pulumi`). */
export const LANGUAGES = ["nodejs", "python", "go", "yaml"] as const;
export type Language = (typeof LANGUAGES)[number];

export interface Toolchain {
  /** The folder holding `pulumi`, its language hosts and the dynamic-provider script. */
  bin: string;
}

let prepared: Toolchain | undefined;

/**
 * Runs `tools/pulumi-toolchain.sh` (it prints its progress on stderr) once per process, and again when a
 * language's host is missing from what was prepared: a `pulumi` of the user's own on PATH, or one built and cached
 * from Go modules with gpu-rental's own language host (Node.js, Python, Go), and Pulumi's YAML host when asked.
 * The Node.js host is always there (dynamic providers run through it); ask for others by the runtime of the
 * program to run (`runtimeLanguage`).
 */
export function ensureToolchain(options: { languages?: readonly Language[] } = {}): Toolchain {
  const languages = options.languages ?? [];
  if (prepared && hasHosts(prepared, languages)) return prepared;
  const script = path.join(PACKAGE_ROOT, "tools", "pulumi-toolchain.sh");
  const result = spawnSync("bash", [script, ...languages], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  if (result.status !== 0) throw new Error(`The Pulumi toolchain could not be prepared (${script} exited ${result.status}; its messages are above).`);
  prepared = { bin: result.stdout.trim() };
  pruneToolchains(prepared.bin);
  return prepared;
}

/** A toolchain built into the cache: the pieces built from other sources that no run used for two hours go. */
function pruneToolchains(bin: string): void {
  const cache = userCacheDir();
  if (path.dirname(path.dirname(bin)) !== cache) return; // a pulumi of the user's own
  for (const piece of ["toolchain-v", "language-host-v"]) pruneUnused(cache, piece);
}

function hasHosts(toolchain: Toolchain, languages: readonly Language[]): boolean {
  const files = ["pulumi", ...["nodejs", ...languages].map((language) => `pulumi-language-${language}`)];
  return files.every((file) => fs.existsSync(path.join(toolchain.bin, file)));
}

/**
 * The language host a project's runtime needs (Pulumi.yaml's `runtime`), or an error naming what to do for a
 * runtime that has none here.
 */
export function runtimeLanguage(runtime: string): Language {
  if ((LANGUAGES as readonly string[]).includes(runtime)) return runtime as Language;
  throw new Error(
    `Pulumi.yaml's runtime is "${runtime}", which has no language host here: gpu-rental's toolchain provides ${LANGUAGES.join(", ")}. ` +
      `For ${runtime || "it"}, install Pulumi with its ${runtime || ""} language host (https://www.pulumi.com/docs/install/) and put it on PATH.`,
  );
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
