import { ChildProcess, spawn } from "node:child_process";
import { createServer, request as httpRequest, Server } from "node:http";
import { AddressInfo } from "node:net";
import * as path from "node:path";
import { REPO_ROOT } from "./paths";

/** One request the SDK sent through the relay, and what Prism made of it. */
export interface Exchange {
  method: string;
  /** As the SDK sent it (the service's paths end in `/`). */
  path: string;
  status: number;
  /** Prism's `sl-violations` header, parsed: what the request (or its answer) breaks of the description. */
  violations: { location: string[]; code: string | number; message: string; severity: string }[];
  /** Prism's problem type when it refused the request (`NO_PATH_MATCHED_ERROR`, `UNPROCESSABLE_ENTITY`, ...). */
  problem?: string;
  detail?: string;
}

export interface PrismJudge {
  /** The relay's URL: the SDK's `apiUrl` (and `autoscalerUrl`). */
  url: string;
  /** Every exchange so far, in order. */
  exchanges: Exchange[];
  stop(): Promise<void>;
}

/**
 * Prism (`@stoplight/prism-cli`, a dev dependency) mocking `description` on loopback, in a process of its own, behind a
 * relay that records each exchange. The relay drops a path's final `/`: the service's paths end in one (the spec, and
 * the public client), the vendor's description names them without it, and Prism matches paths exactly.
 */
export async function prismJudge(description: string): Promise<PrismJudge> {
  const args = ["mock", "-h", "127.0.0.1", "-p", "0", description];
  const prism = spawn(path.join(REPO_ROOT, "node_modules/.bin/prism"), args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NO_COLOR: "1", SCARF_ANALYTICS: "false", DO_NOT_TRACK: "1" },
  });
  const target = await listeningUrl(prism);
  const exchanges: Exchange[] = [];
  const relay = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://relay");
    const pathname = url.pathname.replace(/(.)\/+$/, "$1");
    const out = httpRequest(`${target}${pathname}${url.search}`, { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on("data", (c: Buffer) => chunks.push(c));
      answer.on("end", () => {
        const body = Buffer.concat(chunks);
        exchanges.push(exchangeOf(req.method ?? "GET", req.url ?? "/", answer.statusCode ?? 0, answer.headers, body));
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.end(body);
      });
    });
    out.on("error", (error) => {
      res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "relay", msg: error.message }));
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    exchanges,
    stop: () => stopBoth(relay, prism),
  };
}

function exchangeOf(method: string, sent: string, status: number, headers: Record<string, string | string[] | undefined>, body: Buffer): Exchange {
  const header = headers["sl-violations"];
  const violations = header ? JSON.parse(String(header)) : [];
  const exchange: Exchange = { method, path: sent, status, violations };
  if (String(headers["content-type"] ?? "").includes("problem+json")) {
    const problem = JSON.parse(body.toString("utf8") || "{}");
    exchange.problem = String(problem.type ?? "").split("#")[1];
    exchange.detail = [problem.detail, ...(problem.validation ?? []).map((v: { location: string[]; message: string }) => `${v.location.join(".")}: ${v.message}`)]
      .filter(Boolean)
      .join("; ");
  }
  return exchange;
}

/** The URL Prism prints once it listens (it takes a free port: `-p 0`). */
function listeningUrl(prism: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`Prism did not start within 60 s:\n${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const found = /Prism is listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (found) {
        clearTimeout(timer);
        // Its log goes on: read and dropped, so its pipes never fill.
        for (const stream of [prism.stdout, prism.stderr]) stream?.removeAllListeners("data").resume();
        resolve(found[1]);
      }
    };
    prism.stdout?.on("data", read);
    prism.stderr?.on("data", read);
    prism.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`Prism exited (${code}) before listening:\n${output}`));
    });
  });
}

async function stopBoth(relay: Server, prism: ChildProcess): Promise<void> {
  relay.closeAllConnections();
  await new Promise((resolve) => relay.close(resolve));
  if (prism.exitCode !== null) return;
  const exited = new Promise((resolve) => prism.once("exit", resolve));
  prism.kill("SIGTERM");
  await exited;
}
