import * as http from "node:http";
import * as net from "node:net";

/**
 * A forward proxy as corporate networks have them: plain HTTP requests in absolute form, HTTPS through CONNECT
 * tunnels. Host names ending in `.test` exist only here (they resolve to loopback through the proxy alone), so a
 * request that reaches such a name went through the proxy. Every request is recorded.
 */
export class ForwardProxy {
  readonly seen: string[] = [];
  /** Tunnels are sockets the HTTP server no longer tracks: closed by hand on close(). */
  private readonly tunnels = new Set<net.Socket>();
  private constructor(private readonly server: http.Server, readonly url: string) {}

  static async start(): Promise<ForwardProxy> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const proxy = new ForwardProxy(server, `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
    server.on("request", (req, res) => proxy.forward(req, res));
    server.on("connect", (req, socket: net.Socket, head) => proxy.tunnel(req, socket, head));
    return proxy;
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const target = new URL(req.url!);
    this.seen.push(`${req.method} ${target.host}`);
    const upstream = http.request(
      { host: resolve(target.hostname), port: target.port, path: target.pathname + target.search, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  }

  private tunnel(req: http.IncomingMessage, socket: net.Socket, head: Buffer): void {
    this.seen.push(`CONNECT ${req.url}`);
    const [host, port] = req.url!.split(":");
    const upstream = net.connect(Number(port), resolve(host), () => {
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    for (const end of [socket, upstream]) {
      this.tunnels.add(end);
      end.on("close", () => this.tunnels.delete(end));
    }
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
  }

  close(): Promise<void> {
    for (const socket of this.tunnels) socket.destroy();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function resolve(host: string): string {
  return host.endsWith(".test") ? "127.0.0.1" : host;
}
