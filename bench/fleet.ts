/**
 * `pulumi up` of fleets, as a user runs it: the packed package installed in a program outside the repository,
 * the real engine at its default `--parallel` (4 x cores), against the emulator over HTTP with boots of a given
 * length. In one run, beside its baselines:
 *   - a GpuFleet of 64 and of 256 with 20 s boots, beside one boot (a fleet of 1) — targets: 64 within
 *     1.5 x one boot + 10 s, 256 within 2 x one boot + 20 s;
 *   - a GpuFleet of 64, 128 and 256 with 0 s boots, beside as many trivial resources (a dynamic resource whose
 *     create returns at once) — target: 128 within 1.5 x 128 trivial resources;
 *   - N separate Instance resources with 20 s boots, at the default `--parallel` and at `--parallel N`
 *     (what docs/fleets.md says to set);
 * with the requests per second each up sent to the service. Each row is one up on a fresh emulator, then a
 * destroy (not timed). Figures depend on the machine's load: compare ratios within one run.
 *
 *   npm run bench:fleet                 (BENCH_FLEET_SIZES=64,256  BENCH_BOOT_S=20  BENCH_INSTANCES=32)
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Clock, startEmulator } from "../emulator";
import { pulumi, PulumiWorkspace, runPulumi } from "../cli/pulumi";
import { ensureToolchain } from "../cli/toolchain";
import { packedProgram } from "./packed-program";
import { runBench } from "./run";

const SIZES = (process.env.BENCH_FLEET_SIZES ?? "64,256").split(",").map(Number);
const BOOT_MS = Number(process.env.BENCH_BOOT_S ?? 20) * 1000;
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 32);

const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import { GpuFleet, Instance } from "gpu-rental/provider";

const config = new pulumi.Config();
const kind = config.require("kind");
const count = config.requireNumber("count");

// A resource that costs the engine a slot and nothing else: the baseline of what the engine itself takes.
const trivial: pulumi.dynamic.ResourceProvider = { async create() { return { id: "t", outs: {} }; } };
class Trivial extends pulumi.dynamic.Resource {
  constructor(name: string) {
    super(trivial, name, {}, {});
  }
}

export const ids =
  kind === "fleet"
    ? new GpuFleet("fleet", { size: count, image: "pytorch/pytorch", gpuCount: 1 }).instanceIds
    : kind === "instances"
      ? Array.from({ length: count }, (_, i) => new Instance(\`worker-\${i}\`, { image: "pytorch/pytorch", gpuCount: 1 }).instanceId)
      : Array.from({ length: count }, (_, i) => new Trivial(\`t-\${i}\`).id);
`;

interface Row {
  what: string;
  count: number;
  bootS: number;
  parallel?: number;
  seconds: number;
  requests: number;
}

async function main(): Promise<void> {
  const program = installProgram();
  const toolchain = ensureToolchain();
  const rows: Row[] = [];
  try {
    const run = async (what: string, kind: string, count: number, bootMs: number, parallel?: number) => {
      const row = await upOnce(program, toolchain, kind, count, bootMs, parallel);
      rows.push({ what, count, bootS: bootMs / 1000, parallel, ...row });
      print(rows[rows.length - 1]);
    };
    console.log(`bench:fleet: ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")} (other work on the machine distorts every figure)`);
    console.log("what                | count | boot s | --parallel | up s   | requests | req/s");
    await run("one boot (fleet 1)", "fleet", 1, BOOT_MS);
    for (const size of SIZES) await run("GpuFleet", "fleet", size, BOOT_MS);
    for (const size of [...new Set([...SIZES, 128])].sort((a, b) => a - b)) {
      await run("trivial resources", "trivial", size, 0);
      await run("GpuFleet", "fleet", size, 0);
    }
    await run("Instance resources", "instances", INSTANCES, BOOT_MS);
    await run("Instance resources", "instances", INSTANCES, BOOT_MS, INSTANCES);
  } finally {
    summarize(rows);
  }
}

/** One `pulumi up` on a fresh stack and emulator, timed, with the requests the emulator served; then destroy. */
async function upOnce(program: string, toolchain: PulumiWorkspace["toolchain"], kind: string, count: number, bootMs: number, parallel?: number) {
  const emu = await startEmulator({ clock: new Clock("running"), rateLimits: "off", offers: Math.max(300, count * 2 + 100), lifecycle: { provisioningMs: bootMs / 4, loadingMs: (bootMs * 3) / 4 } });
  let requests = 0;
  emu.server.server.on("request", () => requests++);
  const ws: PulumiWorkspace = { toolchain, projectDir: program, stateDir: fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-bench-fleet-")), env: { GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: emu.apiKey } };
  const stack = `bench-${kind}-${count}`;
  try {
    await pulumi(ws, ["stack", "init", stack]);
    await pulumi(ws, ["config", "set", "kind", kind, "--stack", stack]);
    await pulumi(ws, ["config", "set", "count", String(count), "--stack", stack]);
    const started = Date.now();
    requests = 0;
    const result = await runPulumi(ws, ["up", "--yes", "--stack", stack, ...(parallel ? ["--parallel", String(parallel)] : [])]);
    const seconds = (Date.now() - started) / 1000;
    const sent = requests;
    if (result.code !== 0) throw new Error(`pulumi up of ${count} ${kind} failed:\n${result.stdout}\n${result.stderr}`);
    await pulumi(ws, ["destroy", "--yes", "--stack", stack, "--parallel", String(Math.max(8, count))]);
    return { seconds, requests: sent };
  } finally {
    await runPulumi(ws, ["stack", "rm", "--yes", "--force", "--stack", stack]);
    fs.rmSync(ws.stateDir, { recursive: true, force: true });
    fs.rmSync(path.join(program, `Pulumi.${stack}.yaml`), { force: true });
    await emu.close();
  }
}

/** The benchmark's program, with the packed package, outside the repository. */
function installProgram(): string {
  const files = {
    "package.json": JSON.stringify({ name: "bench-fleet", version: "1.0.0", private: true }),
    "Pulumi.yaml": "name: bench-fleet\nruntime:\n  name: nodejs\n  options:\n    typescript: true\n",
    "index.ts": PROGRAM,
    "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, target: "es2020", module: "commonjs", moduleResolution: "node" }, files: ["index.ts"] }),
  };
  return packedProgram("bench-fleet", files, ["@pulumi/pulumi@3.248.0", "typescript@~5.9.3", "@types/node@^20"]);
}

function print(row: Row): void {
  const cells = [row.what.padEnd(19), String(row.count).padStart(5), String(row.bootS).padStart(6), String(row.parallel ?? "default").padStart(10),
    row.seconds.toFixed(1).padStart(6), String(row.requests).padStart(8), (row.requests / row.seconds).toFixed(1).padStart(5)];
  console.log(cells.join(" | "));
}

/** The targets of the issue, as ratios within this run. */
function summarize(rows: Row[]): void {
  const find = (what: string, count: number, bootS: number) => rows.find((r) => r.what === what && r.count === count && r.bootS === bootS && !r.parallel);
  const one = find("one boot (fleet 1)", 1, BOOT_MS / 1000);
  console.log("\ntargets:");
  for (const [size, factor, slack] of [[64, 1.5, 10], [256, 2, 20]] as const) {
    const fleet = find("GpuFleet", size, BOOT_MS / 1000);
    if (!fleet || !one) continue;
    const limit = factor * one.seconds + slack;
    console.log(`  fleet of ${size}, ${BOOT_MS / 1000} s boots: ${fleet.seconds.toFixed(1)} s; limit ${factor} x one boot (${one.seconds.toFixed(1)} s) + ${slack} s = ${limit.toFixed(1)} s: ${fleet.seconds <= limit ? "met" : "MISSED"}`);
  }
  const fleet128 = find("GpuFleet", 128, 0);
  const trivial128 = find("trivial resources", 128, 0);
  if (fleet128 && trivial128) {
    const ratio = fleet128.seconds / trivial128.seconds;
    console.log(`  fleet of 128, 0 s boots: ${fleet128.seconds.toFixed(1)} s = ${ratio.toFixed(2)} x 128 trivial resources (${trivial128.seconds.toFixed(1)} s), limit 1.5: ${ratio <= 1.5 ? "met" : "MISSED"}`);
  }
}

runBench(main);
