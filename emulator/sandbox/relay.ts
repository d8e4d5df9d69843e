import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { pipeBoth } from "./pipe";

/**
 * The relay of an emulated machine's own network (./network.ts), a process the emulator starts inside that network
 * (`nsenter --net`) while it stays in this computer's files: `relay <socket folder> <port>... host-<port>...`.
 * Files cross network namespaces, TCP does not, so each relay goes through a unix socket of the folder:
 * - `<port>`, a published container port: it listens on the socket `<port>` and pipes each connection to
 *   127.0.0.1:<port> inside the machine's network, where the machine's server listens;
 * - `host-<port>`, a port of this computer's loopback the machine reaches (the emulator's API, the way out): it
 *   listens on 127.0.0.1:<port> inside and pipes each connection to the socket `host-<port>`, which the emulator serves.
 * It says `ready` once everything listens, and ends when its standard input closes: with the emulator that started
 * it, even one killed outright.
 */

/** The release executable's first argument that makes it the relay (provider/release/executable.ts). */
export const RELAY_ARGUMENT = "gpu-rental-machine-relay";

/** Runs the relay with its arguments (the socket folder, then the relays). */
export function runRelay(args: string[]): void {
  const [folder, ...relays] = args;
  if (!folder) throw new Error("usage: relay <socket folder> [<port> | host-<port>]...");
  let waiting = relays.length;
  const listening = () => --waiting <= 0 && process.stdout.write("ready\n");
  fs.mkdirSync(folder, { recursive: true });
  for (const name of relays) {
    const socket = { path: path.join(folder, name), allowHalfOpen: true };
    const inside = { port: Number(name.replace(/^host-/, "")), host: "127.0.0.1", allowHalfOpen: true };
    const toHost = name.startsWith("host-");
    const server = net.createServer({ allowHalfOpen: true }, (client) => pipeBoth(client, net.connect(toHost ? socket : inside)));
    if (toHost) {
      server.listen(inside, listening);
    } else {
      fs.rmSync(socket.path, { force: true });
      server.listen(socket.path, listening);
    }
  }
  if (!relays.length) process.stdout.write("ready\n");
  process.stdin.on("close", () => process.exit(0));
  process.stdin.resume();
}

if (require.main === module) runRelay(process.argv.slice(2));
