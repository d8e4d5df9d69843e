import * as fs from "node:fs";
import * as path from "node:path";

/**
 * The folder of gpu-rental's package.json, from its sources (tests) or its compiled dist/ alike: where the command
 * finds the package's files it runs or serves (the toolchain's scripts and sources, the console's scripts). In the
 * release's executable, which has no package around it, release/bundle.ts puts a module in this one's
 * place whose package root is those files, built into the executable and unpacked into the cache
 * (./embedded-package.ts).
 */
export const PACKAGE_ROOT = findPackageRoot(__dirname);

/**
 * The release's plugin executable this process is (the self-contained one, or a launcher of its bundle), in the
 * folder its archive unpacks to; undefined in the npm package. The executable is the plugin itself, so the command
 * it also serves installs it, not a plugin folder made from the package.
 */
export const RELEASE_EXECUTABLE: string | undefined = undefined;

/**
 * The command line that runs the release's executable again, with arguments of its own after it: the executable
 * (node and the bundle, where a launcher runs it); undefined in the npm package.
 */
export const RELEASE_COMMAND: string[] | undefined = undefined;

function findPackageRoot(from: string): string {
  for (let dir = from; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json");
    if (fs.existsSync(manifest) && JSON.parse(fs.readFileSync(manifest, "utf8")).name === "gpu-rental") return dir;
  }
  throw new Error(`gpu-rental's package.json not found above ${from}`);
}
