import * as os from "node:os";
import * as path from "node:path";

/**
 * The cache folder of the user's gpu-rental files (the toolchain, plugin folders, SSH keys):
 * $GPU_RENTAL_CACHE, else the XDG cache. tools/pulumi-toolchain.sh and tools/clone-cache.js say the same in their
 * own words, as they import nothing.
 */
export const userCacheDir = () =>
  process.env.GPU_RENTAL_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "gpu-rental");
