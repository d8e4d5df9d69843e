import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { REPO_ROOT } from "./provider-host";

/**
 * The last release whose GpuFleet was a component of `Instance` children (main before the fleet became one
 * resource). Pinned: the migration test must keep meeting that form after this branch is merged.
 */
export const COMPONENT_FORM_COMMIT = "e2c3a75178057371c33a745223918081d3eb197e";

/**
 * The packed package of `commit`, as `npm pack` of a clone of it would make it: its files from `git archive`,
 * built with this checkout's TypeScript. Cached by commit in the temp folder (made once, reused by later runs);
 * null, with the reason, when the checkout has no git history holding the commit.
 */
export function packedRelease(commit: string = COMPONENT_FORM_COMMIT): { tarball: string } | { skip: string } {
  const cached = path.join(os.tmpdir(), `gpu-rental-release-${commit.slice(0, 12)}.tgz`);
  if (fs.existsSync(cached)) return { tarball: cached };
  try {
    execFileSync("git", ["cat-file", "-e", `${commit}^{commit}`], { cwd: REPO_ROOT, stdio: "ignore" });
  } catch {
    return { skip: `commit ${commit.slice(0, 12)} (the component-form release) is not in this checkout's git history` };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-release-"));
  try {
    const archive = path.join(dir, "source.tar");
    execFileSync("git", ["archive", "--format=tar", "-o", archive, commit], { cwd: REPO_ROOT });
    const src = path.join(dir, "src");
    fs.mkdirSync(src);
    execFileSync("tar", ["-xf", archive, "-C", src]);
    fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(src, "node_modules"));
    execFileSync(process.execPath, [path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], { cwd: src, stdio: "pipe" });
    const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], { cwd: src, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const [{ filename }] = JSON.parse(out);
    // Written whole, then renamed: a run beside this one never installs half a tarball.
    fs.copyFileSync(path.join(dir, filename), `${cached}.${process.pid}`);
    fs.renameSync(`${cached}.${process.pid}`, cached);
    return { tarball: cached };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
