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

/**
 * Runs `tools/pulumi-toolchain.sh` (which prints its progress on stderr) and returns the folder holding
 * `pulumi` and `pulumi-language-nodejs`.
 */
export function ensureToolchain(): string {
  const script = path.join(PACKAGE_ROOT, "tools", "pulumi-toolchain.sh");
  const result = spawnSync("bash", [script], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  if (result.status !== 0) throw new Error(`The Pulumi toolchain could not be prepared (${script} exited ${result.status}).`);
  const lines = result.stdout.trim().split("\n");
  return lines[lines.length - 1];
}
