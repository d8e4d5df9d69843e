/**
 * Offer search over 10,000 offers (three filters, an order, limit 64), against the emulator, beside a bare
 * `node:http` server that answers a precomputed body of the same size, measured in the same run. The two are
 * measured in alternating rounds, so a machine busy with something else for a while weighs on both alike.
 *
 *   npm run bench            (BENCH_SECONDS=10 per server, BENCH_ROUNDS=5, BENCH_CONNECTIONS=16 by default)
 */
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { combine, load, LoadResult } from "./load";
import { runBench } from "./run";

const ROOT = path.resolve(__dirname, "..");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
const KEY = "bench-key-0123456789";
const QUERY = JSON.stringify({
  gpu_name: { in: ["RTX 4090", "RTX 3090", "A100 SXM4", "H100 SXM"] },
  reliability: { gte: 0.95 },
  dph_total: { lte: 3 },
  order: [["dph_total", "asc"]],
  limit: 64,
});

function start(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const match = /(?:GPU_RENTAL_API_URL|LISTENING)=(\S+)/.exec(out);
      if (match) resolve({ child, url: match[1] });
    });
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited ${code}`)));
  });
}

const BASELINE = `
const http = require("node:http");
const body = require("node:fs").readFileSync(process.argv[1]);
const server = http.createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => { res.writeHead(200, { "content-type": "application/json", "content-length": body.length }); res.end(body); });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => console.log("LISTENING=http://127.0.0.1:" + server.address().port));
`;

function row(name: string, r: LoadResult): string {
  return `${name.padEnd(22)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50Ms.toFixed(2).padStart(7)} ms   p99 ${r.p99Ms.toFixed(2).padStart(7)} ms   (${r.requests} requests, ${r.errors} errors)`;
}

async function main(): Promise<void> {
  const emulator = await start([path.join(ROOT, "bin", "gpu-rental.js"), "emulator", "--offers", "10000", "--api-key", KEY, "--no-rate-limits"]);
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  const sample = await fetch(`${emulator.url}/api/v0/bundles/`, { method: "POST", headers, body: QUERY });
  const body = await sample.text();
  const offers = JSON.parse(body).offers.length;
  const bodyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-bench-")), "body.json");
  fs.writeFileSync(bodyFile, body);
  const baseline = await start(["-e", BASELINE, bodyFile]);
  try {
    console.log(`offer search: 10000 offers, 3 filters + order + limit 64 -> ${offers} offers, ${body.length} bytes a response`);
    console.log(`${CONNECTIONS} keep-alive connections, ${SECONDS} s each in ${ROUNDS} alternating rounds, after a ${Math.min(2, SECONDS)} s warm-up\n`);
    const run = (url: string, seconds: number) => load(url, { method: "POST", headers, body: QUERY, connections: CONNECTIONS, seconds });
    await run(`${emulator.url}/api/v0/bundles/`, Math.min(2, SECONDS));
    await run(`${baseline.url}/`, Math.min(2, SECONDS));
    const rounds: { emu: LoadResult; bare: LoadResult }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      rounds.push({ emu: await run(`${emulator.url}/api/v0/bundles/`, SECONDS / ROUNDS), bare: await run(`${baseline.url}/`, SECONDS / ROUNDS) });
    }
    const emu = combine(rounds.map((r) => r.emu));
    const bare = combine(rounds.map((r) => r.bare));
    console.log(`rounds (emulator/bare throughput): ${rounds.map((r) => (r.emu.rps / r.bare.rps).toFixed(2)).join(" ")}`);
    console.log(row("emulator", emu));
    console.log(row("bare node:http", bare));
    console.log(`\nratio emulator/bare: throughput ${(emu.rps / bare.rps).toFixed(3)}, p50 ${(emu.p50Ms / bare.p50Ms).toFixed(2)}x, p99 ${(emu.p99Ms / bare.p99Ms).toFixed(2)}x`);
  } finally {
    emulator.child.kill();
    baseline.child.kill();
  }
}

runBench(main);
