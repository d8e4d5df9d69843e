import * as fs from "node:fs";
import * as path from "node:path";
import { RELEASE_COMMAND } from "../../sdk/package-root";

/**
 * The program that holds an emulated machine's own network namespace (./network.ts): Node runs it as
 * `unshare -rn node netns-holder.js <ip> <socket folder> <port>... host-<port>...`. It brings the namespace's
 * loopback up, then relays through unix sockets in the folder (files cross network namespaces; TCP does not):
 * - `<port>`, a published container port: it listens on the socket `<port>` and pipes each connection to
 *   127.0.0.1:<port> inside the namespace, where the machine's server listens;
 * - `host-<port>`, a port of this computer's loopback the machine reaches (the emulator's API): it listens on
 *   127.0.0.1:<port> inside and pipes each connection to the socket `host-<port>`, which the emulator serves.
 * It says `ready` once everything listens, and ends when its standard input closes: with the emulator that
 * started it, even one killed outright.
 *
 * It is text written beside the machines' tools, as their `date` and `sleep` are: the same file runs from the
 * TypeScript sources (tests) and from the built package, with nothing to compile or copy.
 */
const HOLDER = `"use strict";
// A tool of the gpu-rental emulator (emulator/sandbox/netns-holder.ts): holds an emulated machine's network.
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const net = require("node:net");
const path = require("node:path");

const [ip, folder, ...relays] = process.argv.slice(2);
execFileSync(ip, ["link", "set", "lo", "up"], { stdio: ["ignore", "ignore", "inherit"] });

function relay(a, b) {
  a.on("error", () => b.destroy());
  b.on("error", () => a.destroy());
  a.on("close", () => b.destroy());
  b.on("close", () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}

let waiting = relays.length;
const listening = () => --waiting <= 0 && process.stdout.write("ready\\n");
fs.mkdirSync(folder, { recursive: true });
for (const name of relays) {
  const socket = { path: path.join(folder, name), allowHalfOpen: true };
  const inside = { port: Number(name.replace(/^host-/, "")), host: "127.0.0.1", allowHalfOpen: true };
  const toHost = name.startsWith("host-");
  const server = net.createServer({ allowHalfOpen: true }, (client) => relay(client, net.connect(toHost ? socket : inside)));
  if (toHost) {
    server.listen(inside, listening);
  } else {
    fs.rmSync(socket.path, { force: true });
    server.listen(socket.path, listening);
  }
}
if (!relays.length) listening();
process.stdin.on("close", () => process.exit(0));
process.stdin.resume();
`;

/**
 * The command line (program and arguments before the holder's own) that runs the holder: Node on the holder's
 * file, written into `toolsDir` (the machines' shared tools folder; a newer emulator's replaces an older's); in the
 * release's executable, which runs no script file, the executable itself with HOLDER_ARGUMENT first.
 */
export function holderCommand(toolsDir: string): string[] {
  if (RELEASE_COMMAND) return [...RELEASE_COMMAND, HOLDER_ARGUMENT];
  const file = path.join(toolsDir, "netns-holder.js");
  fs.mkdirSync(toolsDir, { recursive: true });
  const written = `${file}.${process.pid}.new`;
  fs.writeFileSync(written, HOLDER);
  fs.renameSync(written, file);
  return [process.execPath, file];
}

/** The release executable's first argument that makes it the holder (release/executable.ts). */
export const HOLDER_ARGUMENT = "gpu-rental-netns-holder";

/** Runs the holder in this process (the release's executable), its arguments after the first: as a file of it would. */
export function runHolder(): void {
  process.argv.splice(2, 1);
  new Function("require", HOLDER)(require);
}
