import { randomInt } from "node:crypto";
import * as net from "node:net";
import type { AuthContext, Connection, ParsedKey, Server } from "ssh2";
import { ssh2 } from "../../sdk/ssh2";
import type { InstanceRecord } from "../domain/records";
import { SessionAccess, serveSession } from "./session";

/** SSH is served on loopback only: the emulator's machines run as the emulator's user, on this computer. */
export const SSH_HOST = "127.0.0.1";

/** The user name instances take logins for, as on the live service (`ssh -p PORT root@HOST`). */
export const SSH_USER = "root";

/** How the endpoints learn who may log in and whether the instance is up. */
export interface EndpointAccess extends SessionAccess {
  /** The public keys (OpenSSH lines) that may log into the instance now. */
  authorizedKeys(instanceId: number): string[];
}

interface Endpoint {
  server?: Server;
  port: number;
  connections: Set<Connection>;
}

/**
 * The ports instances' SSH is served on: below Linux's ephemeral range (32768 and up), from which every outgoing
 * connection and every server on port 0 takes one, so a port shown at creation is still free when the machine boots.
 */
const PORTS = { from: 20_000, to: 32_768 };

/**
 * One SSH server per instance, each on its own loopback port (the instance's `ssh_port`), listening only while
 * the instance's machine is up: before `running` and after stop, the port refuses connections outright.
 */
export class SshEndpoints {
  private readonly endpoints = new Map<number, Endpoint>();

  constructor(
    private readonly hostKey: string,
    private readonly access: EndpointAccess,
  ) {}

  /**
   * The port this instance's SSH will be served on: a number picked now, so the instance shows it from the start.
   * It is bound only when the machine comes up, and moves then if something else has taken it meanwhile.
   */
  assign(instance: InstanceRecord): { host: string; port: number } {
    let endpoint = this.endpoints.get(instance.id);
    if (!endpoint) {
      const taken = new Set([...this.endpoints.values()].map((e) => e.port));
      let port: number;
      do port = PORTS.from + randomInt(PORTS.to - PORTS.from);
      while (taken.has(port));
      endpoint = { port, connections: new Set() };
      this.endpoints.set(instance.id, endpoint);
    }
    return { host: SSH_HOST, port: endpoint.port };
  }

  /** Starts listening on the instance's port (another if that one has been taken since); resolves once it is. */
  async up(instance: InstanceRecord): Promise<{ host: string; port: number }> {
    this.assign(instance);
    const endpoint = this.endpoints.get(instance.id)!;
    if (endpoint.server) return { host: SSH_HOST, port: endpoint.port };
    const server = new (ssh2().Server)({ hostKeys: [this.hostKey], ident: "gpu-rental-emulator" }, (client) => this.serve(client, instance.id, endpoint));
    endpoint.server = server;
    server.on("error", () => undefined);
    try {
      endpoint.port = await listen(server, endpoint.port);
    } catch {
      endpoint.port = await listen(server, 0);
    }
    return { host: SSH_HOST, port: endpoint.port };
  }

  /** Stops listening and closes every connection of the instance. */
  down(instance: InstanceRecord): void {
    const endpoint = this.endpoints.get(instance.id);
    if (!endpoint?.server) return;
    endpoint.server.close();
    endpoint.server = undefined;
    for (const connection of endpoint.connections) connection.end();
    endpoint.connections.clear();
  }

  /** The instance is gone: its port is no longer its own. */
  forget(instance: InstanceRecord): void {
    this.down(instance);
    this.endpoints.delete(instance.id);
  }

  close(): void {
    for (const id of [...this.endpoints.keys()]) this.forget({ id } as InstanceRecord);
  }

  private serve(client: Connection, instanceId: number, endpoint: Endpoint): void {
    endpoint.connections.add(client);
    client.on("close", () => endpoint.connections.delete(client));
    client.on("error", () => undefined);
    client.on("authentication", (ctx) => this.authenticate(ctx, instanceId));
    client.on("ready", () => {
      client.on("session", (accept) => serveSession(accept(), instanceId, this.access));
    });
  }

  /** Public key only, with one of the instance's keys, for `root`, while the instance is up. */
  private authenticate(ctx: AuthContext, instanceId: number): void {
    if (ctx.method !== "publickey" || ctx.username !== SSH_USER || !this.access.running(instanceId)) return ctx.reject(["publickey"]);
    const key = this.access
      .authorizedKeys(instanceId)
      .map((line) => ssh2().utils.parseKey(line))
      .find((parsed): parsed is ParsedKey => !(parsed instanceof Error) && !Array.isArray(parsed) && parsed.getPublicSSH().equals(ctx.key.data));
    if (!key) return ctx.reject(["publickey"]);
    // Without a signature the client only asks whether this key would do; with one, it proves it holds the key.
    if (!ctx.signature) return ctx.accept();
    if (key.verify(ctx.blob!, ctx.signature, ctx.hashAlgo) === true) return ctx.accept();
    ctx.reject(["publickey"]);
  }
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => reject(error);
    server.once("error", failed);
    server.listen(port, SSH_HOST, () => {
      server.off("error", failed);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}
