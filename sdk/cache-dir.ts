import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/**
 * The cache folder of the user's gpu-rental files (the toolchain, plugin folders, SSH keys):
 * $GPU_RENTAL_CACHE, else the XDG cache. tools/pulumi-toolchain.sh and tools/clone-cache.js say the same in their
 * own words, as they import nothing.
 */
export const userCacheDir = () =>
  process.env.GPU_RENTAL_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "gpu-rental");

/**
 * `folder`, made by `fill` in a stage beside it and then renamed into place, so no process finds it half made; of
 * two processes making it at once (the same content), the second finds the first's and drops its own stage. An
 * async `fill` makes the answer a promise.
 */
export function madeWhole(folder: string, fill: (stage: string) => void): string;
export function madeWhole(folder: string, fill: (stage: string) => Promise<void>): Promise<string>;
export function madeWhole(folder: string, fill: (stage: string) => void | Promise<void>): string | Promise<string> {
  fs.mkdirSync(path.dirname(folder), { recursive: true });
  const stage = fs.mkdtempSync(`${folder}.partial-`);
  const place = () => {
    try {
      fs.renameSync(stage, folder);
    } catch (error) {
      if (!fs.existsSync(folder)) throw error;
    }
    return folder;
  };
  const drop = () => fs.rmSync(stage, { recursive: true, force: true });
  let filling: void | Promise<void>;
  try {
    filling = fill(stage);
  } catch (error) {
    drop();
    throw error;
  }
  if (filling instanceof Promise) return filling.then(place).finally(drop);
  try {
    return place();
  } finally {
    drop();
  }
}
