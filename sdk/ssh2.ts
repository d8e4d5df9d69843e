import type * as Ssh2 from "ssh2";

/**
 * ssh2, loaded when first used: most processes that load the SDK (a provider host, a program, the CLI) never open
 * an SSH session nor parse a key, and loading ssh2 with its crypto costs each of them some 40 ms of CPU. The package
 * holds ssh2 bundled (ssh2-bundle.js beside this file once built; provider/release/bundle.ts says why); the source
 * tree, before a build, has the ssh2 package itself.
 */
export function ssh2(): typeof Ssh2 {
  try {
    return require("./ssh2-bundle.js");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND" || !(error as Error).message.includes("ssh2-bundle.js")) throw error;
    return require("ssh2");
  }
}
