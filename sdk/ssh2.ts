import * as fs from "node:fs";
import * as path from "node:path";
import type * as Ssh2 from "ssh2";

/**
 * Whether the package's own bundle of ssh2 sits beside this file (`npm run build` makes it; release/bundle.ts
 * says why): so it does in the package, and not in the unbuilt source tree, which has the ssh2 package
 * itself. Looked at once, not at each call: the emulator calls ssh2() for every key it checks.
 */
const BUNDLED = fs.existsSync(path.join(__dirname, "ssh2-bundle.js"));

/**
 * ssh2, loaded when first used: most processes that load the SDK (a provider host, a program, the CLI) never open
 * an SSH session nor parse a key, and loading ssh2 with its crypto costs each of them CPU at start.
 */
export function ssh2(): typeof Ssh2 {
  return BUNDLED ? require("./ssh2-bundle.js") : require("ssh2");
}
