import { ChildProcess, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { PACKAGE_ROOT, RELEASE_COMMAND } from "../../sdk/package-root";
import { which } from "./isolation";
import { pipeBoth } from "./pipe";
import { killGroup, untilReady } from "./processes";
import { RELAY_ARGUMENT } from "./relay";

/**
 * An emulated machine's network: on Linux, a network namespace of its own for each boot (one of the machine's
 * namespaces, ./machine-space.ts), so that several instances' servers on one container port (8000) do not collide;
 * and its published ports, each a real port on loopback that the emulator listens on and pipes to the container
 * port. A relay (./relay.ts), started inside that network with this computer's files, carries each connection
 * through a unix socket to the server inside; and, the other way, the machine's connections to the emulator's own
 * API port on its loopback to the emulator (a container reaches the service's API), and to a forward proxy, its way
 * out to the internet (./egress-proxy.ts). Where namespaces cannot be made, machines share this computer's network
 * and the published ports lead to the container ports directly.
 */

/** Set (to anything) to run every machine in this computer's network, as where namespaces cannot be made. */
export const NO_NETNS = "GPU_RENTAL_NO_NETNS";

/** How long a relay may take to listen (a Node start, some milliseconds) before the boot fails. */
const RELAY_START_MS = 10_000;

let probed: { why?: string } | undefined;

/**
 * Why machines cannot have networks of their own here, or undefined when they can. The probe (one `unshare`, a few
 * milliseconds) runs once per process; the environment variable is read at each call.
 */
export function ownNetworkUnsupported(): string | undefined {
  if (process.env[NO_NETNS]) return `${NO_NETNS} is set`;
  probed ??= probe();
  return probed.why;
}

function probe(): { why?: string } {
  if (process.platform !== "linux") return { why: "network namespaces are Linux's" };
  const [unshare, nsenter, ip] = ["unshare", "nsenter", "ip"].map(which);
  if (!unshare || !nsenter) return { why: "this computer has no unshare and nsenter (util-linux)" };
  if (!ip) return { why: "this computer has no ip (iproute2) to bring a namespace's loopback up" };
  const tried = spawnSync(unshare, ["-rn", ip, "link", "set", "lo", "up"], { encoding: "utf8", timeout: 5_000 });
  if (tried.status !== 0) return { why: `unshare -rn fails here: ${(tried.stderr || tried.error?.message || `status ${tried.status}`).trim()}` };
  return {};
}

/**
 * The command line that runs the relay (./relay.ts), its arguments after it: Node on the compiled module (the
 * package's dist/, also when the emulator runs from its TypeScript sources, as the console's script is served);
 * in the release's executable, which runs no script file, the executable itself with RELAY_ARGUMENT first.
 */
export function relayCommand(): string[] {
  if (RELEASE_COMMAND) return [...RELEASE_COMMAND, RELAY_ARGUMENT];
  const beside = path.join(__dirname, "relay.js");
  const built = fs.existsSync(beside) ? beside : path.join(PACKAGE_ROOT, "dist", "emulator", "sandbox", "relay.js");
  if (!fs.existsSync(built)) throw new Error(`the machines' relay is not built (${built}): run \`npm run build\``);
  return [process.execPath, built];
}

export interface NetworkPlan {
  /**
   * The machine's own network: how a program runs in it (./machine-space.ts's networkCommand) and the folder of the
   * relay's sockets. Without it, this computer's.
   */
  own?: { enter: (file: string, args: string[]) => [string, string[]]; sockets: string };
  /** The container ports published (TCP; SSH's 22 is the emulator's own), each on a port of its own on `host`. */
  ports: number[];
  /** Ports of this computer's loopback the machine reaches at the same port of its own: the emulator's API, the way out. */
  reach: number[];
  /** Of those, the way out's (./egress-proxy.ts), which the machine's proxy variables name. */
  egress?: number;
  host: string;
  /** The relay's environment: the machine's mark among it, so that the machine's stop finds it. */
  env: Record<string, string>;
}

/** One boot's network: made by `open()`, ended by `close()` (idempotent) when the machine stops. */
export class MachineNetwork {
  private relayProcess?: ChildProcess;
  private readonly listeners: net.Server[] = [];
  private readonly connections = new Set<net.Socket>();
  private closed = false;
  /** The real host port of each published container port (`"8000/tcp"` → 41234), once open. */
  readonly published: Record<string, number> = {};

  constructor(private readonly plan: NetworkPlan) {}

  /** The port of the way out inside the machine's network, where it has one of its own. */
  get egressPort(): number | undefined {
    return this.plan.own ? this.plan.egress : undefined;
  }

  async open(): Promise<void> {
    if (this.plan.own) {
      fs.mkdirSync(this.plan.own.sockets, { recursive: true });
      for (const port of this.plan.reach) await this.serveReach(this.plan.own.sockets, port);
      await this.startRelay(this.plan.own);
    }
    for (const port of this.plan.ports) {
      if (this.closed) return;
      this.published[`${port}/tcp`] = await this.publish(port);
    }
  }

  close(): void {
    this.closed = true;
    for (const listener of this.listeners) listener.close();
    for (const connection of this.connections) connection.destroy();
    killGroup(this.relayProcess);
  }

  private startRelay(own: NonNullable<NetworkPlan["own"]>): Promise<void> {
    const relays = [...this.plan.ports.map(String), ...this.plan.reach.map((port) => `host-${port}`)];
    const [program, ...relay] = relayCommand();
    const [file, args] = own.enter(program, [...relay, own.sockets, ...relays]);
    // Its own process group, as the machine's other processes: a Ctrl-C meant for the emulator is the emulator's.
    const child = spawn(file, args, { env: this.plan.env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    this.relayProcess = child;
    return untilReady(child, "its network's relay could not start", RELAY_START_MS);
  }

  /** Listens on the relay's socket `host-<port>` for the machine's connections to `port` of this computer's loopback. */
  private serveReach(sockets: string, port: number): Promise<void> {
    const file = path.join(sockets, `host-${port}`);
    fs.rmSync(file, { force: true });
    const listener = net.createServer({ allowHalfOpen: true }, (machine) => this.relay(machine, net.connect({ port, host: "127.0.0.1", allowHalfOpen: true })));
    this.listeners.push(listener);
    return new Promise((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(file, () => resolve());
    });
  }

  /** Listens on a free port of `host` for the container port; resolves with the port. */
  private publish(containerPort: number): Promise<number> {
    const own = this.plan.own;
    const upstream = () => (own ? net.connect({ path: path.join(own.sockets, String(containerPort)), allowHalfOpen: true }) : net.connect({ port: containerPort, host: "127.0.0.1", allowHalfOpen: true }));
    const listener = net.createServer({ allowHalfOpen: true }, (client) => this.relay(client, upstream()));
    this.listeners.push(listener);
    return new Promise((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(0, this.plan.host, () => {
        const { port } = listener.address() as net.AddressInfo;
        // The machine stopped while this port was being bound: it is not kept.
        if (this.closed) listener.close();
        resolve(port);
      });
    });
  }

  /** Pipes two connections into each other until either ends (./pipe.ts), each closed when the machine stops. */
  private relay(a: net.Socket, b: net.Socket): void {
    for (const one of [a, b]) {
      this.connections.add(one);
      one.on("close", () => this.connections.delete(one));
    }
    pipeBoth(a, b);
  }
}
