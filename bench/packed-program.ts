import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PACKAGE_ROOT } from "../sdk/package-root";

/**
 * A program of `files` outside the repository with the packed package of this checkout and `packages` installed,
 * as a user installs them. Kept in the temp folder by the tarball's content: a later run of the same build reuses
 * the install, its files written anew (package.json, which npm extends, only when it installs).
 */
export function packedProgram(name: string, files: Record<string, string>, packages: string[]): string {
  const packDir = fs.mkdtempSync(path.join(os.tmpdir(), `gpu-rental-${name}-pack-`));
  try {
    const [packed] = JSON.parse(execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", packDir], { cwd: PACKAGE_ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
    const dir = path.join(os.tmpdir(), `gpu-rental-${name}-${packed.shasum.slice(0, 12)}`);
    const installed = fs.existsSync(path.join(dir, "node_modules", "gpu-rental", "package.json"));
    fs.mkdirSync(dir, { recursive: true });
    for (const [file, text] of Object.entries(files)) if (!installed || file !== "package.json") fs.writeFileSync(path.join(dir, file), text);
    if (!installed) {
      execFileSync("npm", ["install", path.join(packDir, packed.filename), ...packages, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], { cwd: dir, stdio: "inherit" });
    }
    return dir;
  } finally {
    fs.rmSync(packDir, { recursive: true, force: true });
  }
}
