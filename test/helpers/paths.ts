import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/**
 * The repository's root. A module of its own: most test files need it and nothing else of the helpers, and
 * each test file loads its imports anew (jest's module registry), so it must not bring @pulumi/pulumi along.
 */
export const REPO_ROOT = path.resolve(__dirname, "..", "..");

/**
 * Removes a folder and everything in it, as `rm -rf` does, in a third of the CPU that fs.rmSync spends on a
 * program's node_modules (some 10,000 files): the suite removes dozens of them.
 */
export function removeTree(dir: string): void {
  execFileSync("rm", ["-rf", "--", dir]);
}

/** A temporary folder of a test's own (`gpu-rental-<prefix>-…`), and how to remove it. */
export function scratch(prefix: string): { dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gpu-rental-${prefix}-`));
  return { dir, remove: () => removeTree(dir) };
}

/**
 * A maker of temporary folders for one test file, each removed after the file's tests (afterAll), so that no run
 * leaves folders behind in the temporary directory. Called at a file's (or a describe block's) top level.
 */
export function scratchFolders(prefix: string): () => string {
  const made: { dir: string; remove(): void }[] = [];
  afterAll(() => made.splice(0).forEach((folder) => folder.remove()));
  return () => {
    const folder = scratch(prefix);
    made.push(folder);
    return folder.dir;
  };
}

/**
 * This PATH as on a machine without Node.js (nor Pulumi): its folders as they are, but those holding node, npm, npx
 * or corepack, whose other commands are linked into a folder in `home` in their place.
 */
export function withoutNode(home: string, pathValue = process.env.PATH ?? ""): string {
  const hidden = ["node", "nodejs", "npm", "npx", "corepack"];
  const bin = path.join(home, ".system-bin");
  fs.mkdirSync(bin, { recursive: true });
  const dirs = withoutPulumi(pathValue).split(path.delimiter).map((dir) => {
    if (!hidden.some((name) => fs.existsSync(path.join(dir, name)))) return dir;
    for (const name of fs.readdirSync(dir)) {
      if (!hidden.includes(name) && !fs.existsSync(path.join(bin, name))) fs.symlinkSync(path.join(dir, name), path.join(bin, name));
    }
    return bin;
  });
  return [...new Set(dirs)].join(path.delimiter);
}

/** PATH without its folders that hold a `pulumi`: a machine where Pulumi is not installed. */
export function withoutPulumi(pathValue: string): string {
  return pathValue.split(path.delimiter).filter((dir) => dir && !fs.existsSync(path.join(dir, "pulumi"))).join(path.delimiter);
}
