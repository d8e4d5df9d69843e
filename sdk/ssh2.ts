import type * as Ssh2 from "ssh2";

/**
 * ssh2, loaded when first used: most processes that load the SDK (a provider host, a program, the CLI) never open
 * an SSH session nor parse a key, and loading ssh2 with its crypto costs each of them some 40 ms of CPU.
 */
export function ssh2(): typeof Ssh2 {
  return require("ssh2");
}
