import { ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

/**
 * A PostgreSQL server of the test's own, as a team's shared state backend: a new cluster in a temporary folder, on
 * a free loopback port, trusting local connections, stopped and removed by `stop()`. PostgreSQL refuses to run as
 * root, so under root the cluster belongs to the `postgres` user that Debian's package makes. When no server is
 * installed, Debian's package is installed (under root); otherwise the error says why it cannot run.
 */
export interface PostgresServer {
  /** `postgres://...`: what `pulumi login` takes for the backend. */
  url: string;
  port: number;
  /** The rows of a query, each a line of `|`-separated fields (psql's unaligned output). */
  query(sql: string): Promise<string[]>;
  stop(): Promise<void>;
}

const ROLE = "gpurental";

export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBin();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-pg-"));
  const asOwner = ownerCommand(dir);
  const port = await freePort();
  execFileSync(...asOwner(path.join(bin, "initdb"), ["-D", path.join(dir, "data"), "-A", "trust", "-U", ROLE, "--no-sync", "--no-instructions"]), { stdio: "pipe" });
  // Fast and small: the cluster is thrown away, so nothing is synced to disk.
  const server = spawn(
    ...asOwner(path.join(bin, "postgres"), ["-D", path.join(dir, "data"), "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200"]),
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  server.stderr!.setEncoding("utf8").on("data", (chunk: string) => (log = (log + chunk).slice(-4000)));
  const stop = () => stopServer(server, dir);
  try {
    await ready(port, server, () => log);
  } catch (error) {
    await stop();
    throw error;
  }
  const url = `postgres://${ROLE}@127.0.0.1:${port}/postgres?sslmode=disable`;
  const query = (sql: string) =>
    new Promise<string[]>((resolve, reject) =>
      execFile(path.join(bin, "psql"), [url, "-At", "-c", sql], { encoding: "utf8" }, (error, stdout) => (error ? reject(error) : resolve(stdout.split("\n").filter(Boolean)))),
    );
  return { url, port, query, stop };
}

/** The folder of the newest PostgreSQL's programs, installing Debian's package when there is none (root only). */
function postgresBin(): string {
  const find = () =>
    fs.existsSync("/usr/lib/postgresql")
      ? fs.readdirSync("/usr/lib/postgresql").map((v) => path.join("/usr/lib/postgresql", v, "bin")).filter((b) => fs.existsSync(path.join(b, "initdb"))).sort().pop()
      : undefined;
  let bin = find();
  if (!bin && process.getuid?.() === 0) {
    execFileSync("sh", ["-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null"], { stdio: "inherit" });
    bin = find();
  }
  if (!bin) throw new Error("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb) and this is not root, so it cannot be: apt-get install postgresql");
  return bin;
}

/** How to run a PostgreSQL program on the cluster in dir: as the `postgres` user under root (dir handed to it). */
function ownerCommand(dir: string): (program: string, args: string[]) => [string, string[]] {
  if (process.getuid?.() !== 0) return (program, args) => [program, args];
  execFileSync("chown", ["-R", "postgres:postgres", dir]);
  // setpriv execs the program in its own process: the server's signals reach it directly.
  return (program, args) => ["setpriv", ["--reuid=postgres", "--regid=postgres", "--clear-groups", "--", program, ...args]];
}

async function ready(port: number, server: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`PostgreSQL ended at start (exit ${server.exitCode}):\n${log()}`);
    const accepting = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => resolve(true)).on("error", () => resolve(false));
      setTimeout(() => resolve(false), 1000).unref();
      socket.unref();
    });
    if (accepting) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`PostgreSQL did not accept connections on port ${port} within 30 s:\n${log()}`);
}

/** A fast shutdown (SIGINT: no waiting for clients), then the folder goes. */
async function stopServer(server: ChildProcess, dir: string): Promise<void> {
  if (server.exitCode === null && server.signalCode === null) {
    const ended = new Promise((resolve) => server.once("exit", resolve));
    server.kill("SIGINT");
    const late = setTimeout(() => server.kill("SIGKILL"), 10_000);
    await ended;
    clearTimeout(late);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.on("error", reject);
  });
}
