import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import * as tls from "node:tls";
import { markUsed, pruneUnused } from "../../cli/cache-folders";
import { packageContent } from "../../cli/plugin-install";
import { ensureToolchain } from "../../cli/toolchain";
import { release } from "../../release/release";
import { userCacheDir } from "../../sdk/cache-dir";
import { madeWhole } from "../../sdk/made-whole";
import { PACKAGE_ROOT } from "../../sdk/package-root";
import { linkCopy, sharedOnce } from "./user-program";

export const VERSION: string = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")).version;

/** The release's GitHub repository, where its pages and its wheel's plugin downloads point. */
const REPOSITORY = "gpu-rental/gpu-rental";

/**
 * What `npm run release` makes, as published (the plugin downloaded from the project's GitHub releases), made once
 * per test run for every test that needs it, from the release this machine made of the same content (keptRelease).
 */
export function sharedRelease(): Promise<string> {
  return sharedOnce(`release v${VERSION}`, async (dir) => linkCopy(await keptRelease(), dir));
}

/**
 * The release of what it is made from (the package's published files, the code that releases it, release/, which
 * the package leaves out, the locked dependencies that bundle and inject it, Node.js, the toolchain that generates
 * the Go SDK), made once on this machine and kept in the user's cache as the product keeps its plugin folders
 * (cli/cache-folders.ts): a run of an unchanged package takes it as it is (esbuild, the executable's
 * injection, gzip and the SDKs would each run otherwise), and any change to those makes a new one. A fresh
 * machine, as CI's, makes it.
 */
async function keptRelease(): Promise<string> {
  const cache = userCacheDir();
  const key = packageContent().update(fs.readFileSync(path.join(PACKAGE_ROOT, "package-lock.json"))).update(`${process.version} ${process.arch} ${ensureToolchain().bin}`);
  for (const file of releaseSources()) key.update(`${file}\0`).update(fs.readFileSync(path.join(PACKAGE_ROOT, file)));
  const folder = path.join(cache, `${KEPT_RELEASE}${key.digest("hex").slice(0, 12)}`);
  if (fs.existsSync(folder)) {
    markUsed(folder);
    return folder;
  }
  // Another run's release of the same content, made meanwhile, is kept rather than this one.
  return madeWhole(folder, async (stage) => {
    await release({ out: stage, log: () => {} });
    pruneUnused(cache, KEPT_RELEASE);
  });
}
const KEPT_RELEASE = `test-release-v${VERSION}-`;

/** The files of release/, by path from the package root, sorted. */
function releaseSources(): string[] {
  const dir = path.join(PACKAGE_ROOT, "release");
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => path.relative(PACKAGE_ROOT, path.join(entry.parentPath, entry.name))).sort();
}

/**
 * A machine's network whose proxy holds a mirror of the release's GitHub downloads, as a company's does: through
 * the HTTPS proxy it names (HTTPS_PROXY), `https://github.com/gpu-rental/gpu-rental/releases/download/v<version>/<file>`
 * is answered from the release's folders, under a certificate of a CA of the mirror's that the machine trusts (its
 * bundle where pip, requests, OpenSSL and curl look); every other host is tunnelled as it is. The engine's plugin downloads
 * from the project's releases go to the same folders by Pulumi's own mirror setting
 * (PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES). So pages that name the release's real URLs run as printed, and what
 * was fetched is counted.
 */
export class ReleaseMirror {
  private readonly served = new Map<string, number>();
  private readonly sockets = new Set<net.Socket>();
  private files!: http.Server;
  private proxy!: http.Server;
  private work!: string;
  /** The machine's settings that lead to the mirror. */
  env: Record<string, string> = {};

  private constructor(private readonly folders: string[]) {}

  /** Serves `folders` (the first holding a file answers). */
  static async start(folders: string[]): Promise<ReleaseMirror> {
    const mirror = new ReleaseMirror(folders);
    await mirror.listen();
    return mirror;
  }

  /** How many times `file` (an archive's or the wheel's name) was answered, by either way. */
  fetched(file: string): number {
    return this.served.get(file) ?? 0;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all([this.files, this.proxy].map((server) => new Promise((resolve) => server.close(resolve))));
    fs.rmSync(this.work, { recursive: true, force: true });
  }

  private async listen(): Promise<void> {
    this.work = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-mirror-"));
    const { key, cert, bundle } = mirrorCertificates(this.work);
    this.files = http.createServer((request, answer) => this.answer(request, answer));
    this.proxy = http.createServer((_request, answer) => answer.writeHead(405).end("this proxy only tunnels (CONNECT)"));
    this.proxy.on("connect", (request: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
      socket.on("error", () => socket.destroy());
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) socket.unshift(head);
      if (request.url === "github.com:443") {
        this.files.emit("connection", new tls.TLSSocket(socket, { isServer: true, key, cert }));
        return;
      }
      const [host, port] = (request.url ?? "").split(":");
      const upstream = net.connect(Number(port), host, () => socket.pipe(upstream).pipe(socket));
      upstream.on("error", () => socket.destroy());
      socket.on("close", () => upstream.destroy());
    });
    const [files, proxy] = await Promise.all([this.files, this.proxy].map((server) => new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)))));
    const proxyUrl = `http://127.0.0.1:${proxy}`;
    this.env = {
      HTTPS_PROXY: proxyUrl,
      https_proxy: proxyUrl,
      NO_PROXY: "127.0.0.1,localhost",
      no_proxy: "127.0.0.1,localhost",
      // The machine's trust, wherever its tools read it: pip, requests (which pip vendors), OpenSSL, curl.
      PIP_CERT: bundle,
      REQUESTS_CA_BUNDLE: bundle,
      SSL_CERT_FILE: bundle,
      CURL_CA_BUNDLE: bundle,
      PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES: `^github://api\\.github\\.com/${REPOSITORY}=http://127.0.0.1:${files}/`,
    };
  }

  /** A file of the folders, by its name: the engine's override asks `/<file>`, GitHub's URL `/<repo>/releases/download/v<version>/<file>`. */
  private answer(request: http.IncomingMessage, answer: http.ServerResponse): void {
    const urlPath = decodeURIComponent(new URL(request.url ?? "/", "http://mirror").pathname);
    const name = urlPath.replace(new RegExp(`^/${REPOSITORY}/releases/download/v[^/]+/`), "/").slice(1);
    const file = name.includes("/") ? undefined : this.folders.map((folder) => path.join(folder, name)).find((candidate) => fs.existsSync(candidate) && fs.statSync(candidate).isFile());
    if (request.method !== "GET" || !file) {
      answer.writeHead(404).end("not found");
      return;
    }
    this.served.set(name, (this.served.get(name) ?? 0) + 1);
    answer.writeHead(200, { "content-type": "application/octet-stream", "content-length": fs.statSync(file).size });
    fs.createReadStream(file).pipe(answer);
  }
}

/**
 * A CA of the mirror's and its certificate for github.com (openssl, EC keys: milliseconds), and the bundle a machine
 * behind the mirror trusts: the system's CAs and the mirror's.
 */
function mirrorCertificates(dir: string): { key: Buffer; cert: Buffer; bundle: string } {
  const at = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => {
    const result = spawnSync("openssl", args, { encoding: "utf8" });
    if (result.status !== 0) throw new Error(`openssl ${args.join(" ")} failed: ${result.stderr}`);
  };
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl("req", "-x509", ...ec, "-keyout", at("ca.key"), "-out", at("ca.crt"), "-days", "2", "-subj", "/CN=gpu-rental tests' release mirror",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  openssl("req", ...ec, "-keyout", at("github.key"), "-out", at("github.csr"), "-subj", "/CN=github.com");
  fs.writeFileSync(at("github.ext"), "subjectAltName=DNS:github.com\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n");
  openssl("x509", "-req", "-in", at("github.csr"), "-CA", at("ca.crt"), "-CAkey", at("ca.key"), "-CAcreateserial", "-out", at("github.crt"), "-days", "2", "-extfile", at("github.ext"));
  const system = process.env.PIP_CERT || process.env.SSL_CERT_FILE || "/etc/ssl/certs/ca-certificates.crt";
  fs.writeFileSync(at("bundle.pem"), `${fs.existsSync(system) ? fs.readFileSync(system, "utf8") : ""}\n${fs.readFileSync(at("ca.crt"), "utf8")}`);
  return { key: fs.readFileSync(at("github.key")), cert: fs.readFileSync(at("github.crt")), bundle: at("bundle.pem") };
}
