import { spawnSync } from "node:child_process";
import * as path from "node:path";

export const PACKAGE_ROOT = path.resolve(__dirname, "..", "..");

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
