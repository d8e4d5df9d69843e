/**
 * `pulumi up` of 32 instances, then of 200, through the provider plugin, both as the Node.js folder (plugin/, node
 * on its index.js) and as the release's self-contained executable, against the same through the dynamic providers
 * and against as many trivial resources (a dynamic provider whose create returns at once), in one run, by the real engine
 * against a real emulator over HTTP (instances boot at once). Prints each time and the ratios to the trivial
 * baseline (medians of BENCH_ROUNDS interleaved rounds). Every program is JavaScript in a folder outside the repository whose node_modules is the
 * repository's (so `gpu-rental` is this checkout's dist/, and the plugin is its plugin/ folder). First, each
 * plugin's start: from its process's spawn to its answer to the engine's first call (GetPluginInfo), median of
 * BENCH_STARTS starts.
 *
 *   npm run bench:plugin            (BENCH_INSTANCES=32,200, BENCH_PARALLEL=64, BENCH_ROUNDS=5, BENCH_STARTS=9)
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { PACKAGE_PLUGIN_DIR, PLUGIN_EXECUTABLE } from "../provider/plugin/names";
import { PulumiWorkspace, runPulumi } from "../cli/pulumi";
import { ensureToolchain } from "../cli/toolchain";
import { PACKAGE_ROOT } from "../sdk/package-root";
import { Clock, startEmulator } from "../emulator";
import { makePluginArchives } from "../release/archives";
import { runBench } from "./run";

const providerGrpc = require("@pulumi/pulumi/proto/provider_grpc_pb");
const { Empty } = require("google-protobuf/google/protobuf/empty_pb");

/** The sizes of program measured, each in rounds of its own; a program reads its size from BENCH_COUNT. */
const COUNTS = String(process.env.BENCH_INSTANCES ?? "32,200").split(",").map(Number);
const PARALLEL = String(process.env.BENCH_PARALLEL ?? 64);
/** Rounds of the four, interleaved; each figure is the median of its rounds (one up is noisy on 2 cores). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const STARTS = Number(process.env.BENCH_STARTS ?? 9);
/** The ratios to trivial resources that issue 58 asks for, by program size (docs/benchmarks.md has the runs). */
const TARGETS: Record<number, Record<string, number>> = { 32: { dynamic: 1.25 }, 200: { dynamic: 1.45, plugin: 1.45 } };
const IMAGE = "nvidia/cuda:12.4.1-runtime-ubuntu22.04";
/** The release's plugin executable, unpacked here (made by main()). */
const EXECUTABLE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-bench-executable-"));

const PLUGIN_INDEX = `const pulumi = require("@pulumi/pulumi");
for (let i = 0; i < Number(process.env.BENCH_COUNT); i++) new pulumi.CustomResource("gpu-rental:index:Instance", "i" + i, { image: "${IMAGE}", label: "bench-" + i, instanceId: undefined });
`;
const pluginAt = (dir: string) => `plugins:\n  providers:\n    - name: gpu-rental\n      path: ${dir}\n`;

const PROGRAMS: Record<string, { yaml?: string; index: string }> = {
  trivial: {
    index: `const pulumi = require("@pulumi/pulumi");
const provider = { async create() { return { id: "trivial", outs: {} }; } };
for (let i = 0; i < Number(process.env.BENCH_COUNT); i++) new pulumi.dynamic.Resource(provider, "t" + i, {});
`,
  },
  dynamic: {
    index: `const { Instance } = require("gpu-rental/provider");
for (let i = 0; i < Number(process.env.BENCH_COUNT); i++) new Instance("i" + i, { image: "${IMAGE}", label: "bench-" + i });
`,
  },
  plugin: { yaml: pluginAt(PACKAGE_PLUGIN_DIR), index: PLUGIN_INDEX },
  executable: { yaml: pluginAt(EXECUTABLE_DIR), index: PLUGIN_INDEX },
};

async function main(): Promise<void> {
  const toolchain = ensureToolchain();
  const [archive] = await makePluginArchives(EXECUTABLE_DIR, "0.0.0-bench", { launchers: [] });
  if (spawnSync("tar", ["-xzf", archive, "-C", EXECUTABLE_DIR]).status !== 0) throw new Error(`tar -xzf ${archive} failed`);
  for (const [name, dir] of [["plugin (Node.js folder)", PACKAGE_PLUGIN_DIR], ["executable (release)", EXECUTABLE_DIR]]) {
    const ms: number[] = [];
    for (let i = 0; i < STARTS; i++) ms.push(await firstAnswerMs(path.join(dir, PLUGIN_EXECUTABLE)));
    console.log(`${name.padEnd(24)} start to its first answer (GetPluginInfo): median ${ms.sort((a, b) => a - b)[Math.floor(STARTS / 2)].toFixed(0)} ms of ${STARTS} (target under 1000 ms)`);
  }
  const emulator = await startEmulator({ clock: new Clock("running"), rateLimits: "off", lifecycle: { provisioningMs: 0, loadingMs: 0 }, offers: Math.max(300, Math.max(...COUNTS) * 4) });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-bench-plugin-"));
  try {
    const workspaces: Record<string, PulumiWorkspace> = {};
    for (const [name, program] of Object.entries(PROGRAMS)) {
      const dir = path.join(root, name);
      fs.mkdirSync(dir);
      fs.symlinkSync(path.join(PACKAGE_ROOT, "node_modules"), path.join(dir, "node_modules"));
      fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: `bench-${name}`, private: true }));
      fs.writeFileSync(path.join(dir, "Pulumi.yaml"), `name: bench-${name}\nruntime: nodejs\n${program.yaml ?? ""}`);
      fs.writeFileSync(path.join(dir, "index.js"), program.index);
      workspaces[name] = { toolchain, projectDir: dir, stateDir: path.join(root, `${name}-state`), env: { GPU_RENTAL_API_URL: emulator.url, GPU_RENTAL_API_KEY: emulator.apiKey } };
      await must(workspaces[name], ["stack", "init", "bench"]);
    }
    const lines: string[] = [];
    for (const count of COUNTS) {
      const env = { BENCH_COUNT: String(count) };
      const seconds: Record<string, number[]> = Object.fromEntries(Object.keys(PROGRAMS).map((name) => [name, []]));
      // Rounds interleave the programs, so a slow moment of the machine falls on all of them; medians compare.
      for (let round = 1; round <= ROUNDS; round++) {
        for (const name of Object.keys(PROGRAMS)) {
          const started = process.hrtime.bigint();
          await must(workspaces[name], ["up", "--yes", "--skip-preview", "--parallel", PARALLEL, "--stack", "bench"], env);
          seconds[name].push(Number(process.hrtime.bigint() - started) / 1e9);
          await must(workspaces[name], ["destroy", "--yes", "--skip-preview", "--parallel", PARALLEL, "--stack", "bench"], env);
        }
        console.log(`${count}, round ${round}: ${Object.keys(PROGRAMS).map((name) => `${name} ${seconds[name][round - 1].toFixed(1)} s`).join(", ")}`);
      }
      const median = (name: string) => [...seconds[name]].sort((a, b) => a - b)[Math.floor(ROUNDS / 2)];
      for (const name of Object.keys(PROGRAMS)) lines.push(`${name.padEnd(10)} up of ${String(count).padStart(3)}: median ${median(name).toFixed(2)} s of ${ROUNDS}`);
      const ratio = (name: string) => (median(name) / median("trivial")).toFixed(2);
      const target = (name: string) => (TARGETS[count]?.[name] ? ` (target at most ${TARGETS[count][name]}x)` : "");
      const ratios = ["executable", "plugin", "dynamic"].map((name) => `${name} / trivial ${ratio(name)}x${target(name)}`);
      lines.push(`${count}: ${ratios.join(", ")}; plugin / dynamic ${(median("plugin") / median("dynamic")).toFixed(2)}x`);
    }
    // Every size's figures together, at the end, side by side.
    for (const line of lines) console.log(line);
  } finally {
    await emulator.close();
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(EXECUTABLE_DIR, { recursive: true, force: true });
  }
}

/** Milliseconds from starting a plugin executable, as the engine does, to its answer to GetPluginInfo. */
async function firstAnswerMs(executable: string): Promise<number> {
  const started = process.hrtime.bigint();
  const child = spawn(executable, ["127.0.0.1:1"], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().split("\n")[0])));
      child.once("exit", (code) => reject(new Error(`${executable} exited ${code} before printing its port`)));
    });
    const client = new providerGrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    await new Promise((resolve, reject) => client.getPluginInfo(new Empty(), (error: Error | null, info: unknown) => (error ? reject(error) : resolve(info))));
    client.close();
    return Number(process.hrtime.bigint() - started) / 1e6;
  } finally {
    child.kill();
  }
}

async function must(ws: PulumiWorkspace, args: string[], env: Record<string, string> = {}): Promise<void> {
  const result = await runPulumi(ws, args, { env });
  if (result.code !== 0) throw new Error(`pulumi ${args.join(" ")} failed:\n${result.stdout}\n${result.stderr}`);
}

runBench(main);
