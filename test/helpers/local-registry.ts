import { execFileSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";

const UPSTREAM = "https://registry.npmjs.org";

/**
 * An npm registry on loopback that serves the packed package under its own name, as the public registry would
 * once it is published, and passes every other request on to the public registry. With it, `npm install
 * gpu-rental` runs exactly as a user types it.
 */
export class LocalRegistry {
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(tarball: string): Promise<LocalRegistry> {
    const manifest = JSON.parse(execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }));
    const bytes = fs.readFileSync(tarball);
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    // Under a path of the tarball's own digest: npm's cache keys a packument by its URL, and a port used by an
    // earlier run's registry would otherwise bring back that run's packument, and its tarball (prefer-offline).
    const prefix = `/${crypto.createHash("sha256").update(bytes).digest("hex").slice(0, 16)}`;
    const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}${prefix}/`;
    const file = `${manifest.name}-${manifest.version}.tgz`;
    const packument = {
      name: manifest.name,
      "dist-tags": { latest: manifest.version },
      versions: {
        [manifest.version]: {
          ...manifest,
          dist: {
            tarball: `${url}${manifest.name}/-/${file}`,
            shasum: crypto.createHash("sha1").update(bytes).digest("hex"),
            integrity: `sha512-${crypto.createHash("sha512").update(bytes).digest("base64")}`,
          },
        },
      },
    };
    server.on("request", async (req, res) => {
      if (!req.url?.startsWith(`${prefix}/`)) return res.writeHead(404).end();
      req.url = req.url.slice(prefix.length);
      if (req.url === `/${manifest.name}`) return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument));
      if (req.url === `/${manifest.name}/-/${file}`) return res.writeHead(200, { "content-type": "application/octet-stream" }).end(bytes);
      try {
        const answer = await fetch(UPSTREAM + req.url, { headers: { accept: req.headers.accept ?? "application/json" } });
        res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/octet-stream" });
        res.end(Buffer.from(await answer.arrayBuffer()));
      } catch {
        res.writeHead(502).end();
      }
    });
    return new LocalRegistry(server, url);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
