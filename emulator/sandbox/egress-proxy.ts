import { lookup } from "node:dns/promises";
import * as http from "node:http";
import * as net from "node:net";

/**
 * The way out of the machines' own networks (./network.ts): a forward proxy on this computer's loopback that each
 * namespace reaches at the same port of its own, named in the machines' `HTTP_PROXY` and `HTTPS_PROXY`. What
 * honours them (pip, curl, wget, git, npm, Hugging Face's downloads) reaches the internet as the machine on the
 * service would; servers on this computer's loopback stay out of reach (`NO_PROXY` keeps the machine's own loopback
 * its own). HTTPS goes through `CONNECT` tunnels, plain HTTP as absolute-URL requests.
 */
export class EgressProxy {
  private server?: http.Server;
  private listening?: Promise<number>;
  private readonly sockets = new Set<net.Socket>();

  /** Its port on 127.0.0.1, listening from the first call on. */
  port(): Promise<number> {
    this.listening ??= this.listen();
    return this.listening;
  }

  close(): void {
    this.server?.close();
    for (const socket of this.sockets) socket.destroy();
  }

  private listen(): Promise<number> {
    const server = (this.server = http.createServer((request, response) => this.forward(request, response)));
    server.on("connect", (request: http.IncomingMessage, client: net.Socket, head: Buffer) => this.tunnel(request, client, head));
    server.on("connection", (socket: net.Socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port));
    });
  }

  /** `CONNECT host:port`: a tunnel, bytes both ways, to the address the name was checked at. */
  private async tunnel(request: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    client.on("error", () => undefined);
    const [host, port] = splitTarget(request.url ?? "");
    const address = host && port ? await outsideAddress(host) : undefined;
    if (!address || !port) return void client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
    const upstream = net.connect({ host: address, port }, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    this.sockets.add(upstream);
    upstream.on("close", () => this.sockets.delete(upstream));
    upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
    client.on("error", () => upstream.destroy());
  }

  /** A plain-HTTP request by absolute URL: sent on (to the address its name was checked at), its answer sent back. */
  private async forward(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    let target: URL;
    try {
      target = new URL(request.url ?? "");
    } catch {
      return void response.writeHead(400).end("a proxy request names an absolute http:// URL\n");
    }
    const address = target.protocol === "http:" ? await outsideAddress(target.hostname.replace(/^\[|\]$/g, "")) : undefined;
    if (!address) return void response.writeHead(403).end();
    const upstream = http.request(target, { method: request.method, headers: request.headers, lookup: (_name, _options, done) => done(null, address, net.isIP(address)) }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    upstream.on("error", () => (response.headersSent ? response.destroy() : response.writeHead(502).end()));
    request.pipe(upstream);
  }
}

/** `host:port` (or `[v6]:port`) as a CONNECT names it. */
function splitTarget(target: string): [string | undefined, number | undefined] {
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(target);
  return match ? [match[1], Number(match[2])] : [undefined, undefined];
}

/** This computer's own addresses of loopback and "this host", which a machine's traffic out never reaches. */
const THIS_HOST = new net.BlockList();
THIS_HOST.addSubnet("127.0.0.0", 8, "ipv4");
THIS_HOST.addSubnet("0.0.0.0", 8, "ipv4");
THIS_HOST.addAddress("::1", "ipv6");
THIS_HOST.addAddress("::", "ipv6");
THIS_HOST.addSubnet("::ffff:127.0.0.0", 104, "ipv6");
THIS_HOST.addSubnet("::ffff:0.0.0.0", 104, "ipv6");

/**
 * The address a target name or address resolves to, when none of its addresses is this computer's loopback (a name
 * made to resolve there, an address written another way): the connection goes to that very address, so a second
 * resolution cannot lead elsewhere. Undefined otherwise, or when the name does not resolve.
 */
async function outsideAddress(host: string): Promise<string | undefined> {
  try {
    const addresses = await lookup(host, { all: true, verbatim: true });
    if (!addresses.length || addresses.some((a) => THIS_HOST.check(a.address, a.family === 6 ? "ipv6" : "ipv4"))) return undefined;
    return addresses[0].address;
  } catch {
    return undefined;
  }
}
