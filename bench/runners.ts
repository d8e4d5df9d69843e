/**
 * Many CI runners, one account, one shared backend: N runners (default 1, 2, 4, 8) each deploy a stack of their
 * own (8 Instances) at once, against one emulator, with the stacks' state in a PostgreSQL server of the bench's
 * own. Each runner has its own Pulumi home and checkout, as separate CI machines do. In one run it prints, for each
 * N: the wall time of the N deploys against one runner's, the rentals per second, and the collisions (an offer
 * rented by two stacks: must be 0). Target: 4 runners within 1.5 x one runner's time on 2 cores. Each row is
 * the ups of fresh stacks on a fresh emulator, then their destroys (not timed).
 *
 *   npm run bench:runners                 (BENCH_RUNNERS=1,2,4,8  BENCH_INSTANCES=8  BENCH_BOOT_S=5)
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Clock, startEmulator } from "../emulator";
import { pulumi, PulumiWorkspace } from "../cli/pulumi";
import { ensureToolchain } from "../cli/toolchain";
import { packedProgram } from "./packed-program";
import { startPostgres } from "../test/helpers/postgres";
import { runBench } from "./run";

const RUNNERS = (process.env.BENCH_RUNNERS ?? "1,2,4,8").split(",").map(Number);
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 8);
const BOOT_MS = Number(process.env.BENCH_BOOT_S ?? 5) * 1000;

const PROGRAM = `const pulumi = require("@pulumi/pulumi");
const { Instance } = require("gpu-rental/provider");
const count = new pulumi.Config().requireNumber("count");
exports.ids = Array.from({ length: count }, (_, i) => new Instance(\`worker-\${i}\`, { image: "pytorch/pytorch", gpuCount: 1 }).instanceId);
`;

interface Row {
  runners: number;
  seconds: number;
  rentals: number;
  collisions: number;
}

async function main(): Promise<void> {
  const program = installProgram();
  const toolchain = ensureToolchain();
  const pg = await startPostgres();
  const rows: Row[] = [];
  try {
    console.log(`bench:runners: ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")} (other work on the machine distorts every figure)`);
    console.log(`${INSTANCES} Instances per stack, ${BOOT_MS / 1000} s boots, PostgreSQL backend`);
    console.log("runners | wall s | x one runner | rentals | rentals/s | collisions");
    for (const n of RUNNERS) {
      rows.push({ runners: n, ...(await deployAtOnce(program, toolchain, pg.url, n)) });
      print(rows[rows.length - 1], rows[0]);
    }
  } finally {
    await pg.stop();
  }
  const one = rows.find((r) => r.runners === 1);
  const four = rows.find((r) => r.runners === 4);
  if (one && four) {
    const ratio = four.seconds / one.seconds;
    console.log(`\ntarget: 4 runners within 1.5 x one runner: ${ratio.toFixed(2)} x: ${ratio <= 1.5 ? "met" : "MISSED"}; collisions in all: ${rows.reduce((sum, r) => sum + r.collisions, 0)}`);
  }
}

/** N runners, each with its own home and checkout, `up` their stacks at once on one fresh emulator. */
async function deployAtOnce(program: string, toolchain: PulumiWorkspace["toolchain"], backend: string, n: number): Promise<Omit<Row, "runners">> {
  const emu = await startEmulator({ clock: new Clock("running"), rateLimits: "off", offers: Math.max(300, n * INSTANCES * 3), lifecycle: { provisioningMs: BOOT_MS / 4, loadingMs: (BOOT_MS * 3) / 4 } });
  const passphrase = path.join(os.tmpdir(), `gpu-rental-bench-runners-${process.pid}`);
  fs.writeFileSync(passphrase, "bench", { mode: 0o600 });
  const env = { GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: emu.apiKey, PULUMI_BACKEND_URL: backend, PULUMI_CONFIG_PASSPHRASE_FILE: passphrase };
  const runners = Array.from({ length: n }, (_, i) => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-bench-runner-"));
    const checkout = path.join(stateDir, "checkout");
    execFileSync("cp", ["-al", program, checkout]);
    return { ws: { toolchain, projectDir: checkout, stateDir, env } as PulumiWorkspace, stack: `bench-${n}-${i}` };
  });
  try {
    await Promise.all(runners.map(async ({ ws, stack }) => {
      await pulumi(ws, ["stack", "init", stack]);
      await pulumi(ws, ["config", "set", "count", String(INSTANCES), "--stack", stack]);
    }));
    const started = Date.now();
    await Promise.all(runners.map(({ ws, stack }) => pulumi(ws, ["up", "--yes", "--skip-preview", "--parallel", String(INSTANCES * 2), "--stack", stack])));
    const seconds = (Date.now() - started) / 1000;
    const offers = emu.marketplace.instances.all().map((i) => i.offer.id);
    const rentals = offers.length;
    await Promise.all(runners.map(({ ws, stack }) => pulumi(ws, ["destroy", "--yes", "--skip-preview", "--parallel", String(INSTANCES * 2), "--stack", stack])));
    return { seconds, rentals, collisions: rentals - new Set(offers).size };
  } finally {
    await Promise.all(runners.map(({ ws, stack }) => pulumi(ws, ["stack", "rm", "--yes", "--force", "--stack", stack]).catch(() => undefined)));
    for (const { ws } of runners) fs.rmSync(ws.stateDir, { recursive: true, force: true });
    fs.rmSync(passphrase, { force: true });
    await emu.close();
  }
}

/** The benchmark's JavaScript program, with the packed package, outside the repository. */
function installProgram(): string {
  const files = {
    "package.json": JSON.stringify({ name: "bench-runners", version: "1.0.0", private: true }),
    "Pulumi.yaml": "name: bench-runners\nruntime:\n  name: nodejs\n  options:\n    typescript: false\n",
    "index.js": PROGRAM,
  };
  return packedProgram("bench-runners", files, ["@pulumi/pulumi@3.248.0"]);
}

function print(row: Row, first: Row): void {
  const cells = [String(row.runners).padStart(7), row.seconds.toFixed(1).padStart(6), (row.seconds / first.seconds).toFixed(2).padStart(12),
    String(row.rentals).padStart(7), (row.rentals / row.seconds).toFixed(1).padStart(9), String(row.collisions).padStart(10)];
  console.log(cells.join(" | "));
}

runBench(main);
