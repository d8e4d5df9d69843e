/**
 * Durable writes against history: the emulator with `--data-dir` runs create+destroy cycles (two acknowledged,
 * flushed writes each) with nothing left alive, and at checkpoints the write rate and the state on disk are
 * measured. Two baselines in the same run: the write rate of the first cycles (empty history), and the rate
 * of bare flushed appends to a file in the same folder (what the disk allows at all).
 *
 *   npm run bench:durable     (BENCH_CYCLES=1200 by default; BENCH_CYCLES=10000 for the long run;
 *                              BENCH_WINDOW=200 cycles measured at each checkpoint; BENCH_WORKERS=4)
 */
import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "..");
const CYCLES = Number(process.env.BENCH_CYCLES ?? 1200);
const WINDOW = Number(process.env.BENCH_WINDOW ?? 200);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 4);
const CHECKPOINT = Math.max(WINDOW, Number(process.env.BENCH_CHECKPOINT ?? (CYCLES >= 5000 ? 1000 : 400)));
const KEY = "bench-durable-key-0123";

function start(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [path.join(ROOT, "bin", "gpu-rental.js"), "emulator", "--data-dir", dataDir, "--api-key", KEY], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const match = /GPU_RENTAL_API_URL=(\S+)/.exec(out);
      if (match) resolve({ child, url: match[1] });
    });
    child.once("exit", (code) => reject(new Error(`emulator exited ${code}`)));
  });
}

async function call(url: string, method: string, body?: unknown): Promise<any> {
  const res = await fetch(url, { method, headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const parsed = await res.json();
  if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/** `cycles` create+destroy cycles over WORKERS clients, each on an offer of its own; writes per second. */
async function churn(url: string, offers: number[], cycles: number): Promise<number> {
  let left = cycles;
  const started = process.hrtime.bigint();
  await Promise.all(
    offers.map(async (offer) => {
      while (left > 0) {
        left--;
        const { new_contract: id } = await call(`${url}/api/v0/asks/${offer}/`, "PUT", { image: "bench", disk: 8 });
        await call(`${url}/api/v0/instances/${id}/`, "DELETE");
      }
    }),
  );
  return (2 * cycles) / (Number(process.hrtime.bigint() - started) / 1e9);
}

/** The disk's own rate: small appends, each flushed, as the journal does. */
function bareAppends(dir: string, count: number): number {
  const file = path.join(dir, "bare-appends");
  const fd = fs.openSync(file, "a", 0o600);
  const line = Buffer.from("x".repeat(400) + "\n");
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    fs.writeSync(fd, line);
    fs.fdatasyncSync(fd);
  }
  const rate = count / (Number(process.hrtime.bigint() - started) / 1e9);
  fs.closeSync(fd);
  fs.rmSync(file);
  return rate;
}

const sizeOf = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-bench-durable-"));
  let emulator = await start(dataDir);
  try {
    /** Stopped, the emulator folds its journal into the snapshot: the size of the state it keeps. */
    const restart = async () => {
      emulator.child.kill("SIGTERM");
      await new Promise((resolve) => emulator.child.once("exit", resolve));
      const kept = sizeOf(path.join(dataDir, "state.json"));
      emulator = await start(dataDir);
      return kept;
    };
    const found = await call(`${emulator.url}/api/v0/bundles/`, "POST", { limit: WORKERS, order: [["dph_total", "asc"]] });
    const offers: number[] = found.offers.map((o: { id: number }) => o.id);
    console.log(`durable writes: ${CYCLES} create+destroy cycles (2 writes each, nothing left alive), ${WORKERS} clients, rate over ${WINDOW}-cycle windows`);
    const disk = bareAppends(dataDir, 2000);
    console.log(`bare flushed appends in the same folder: ${disk.toFixed(0)}/s\n`);
    console.log(`${"after cycles".padEnd(14)}${"writes/s".padStart(10)}${"vs first".padStart(10)}${"vs disk".padStart(9)}${"state.json".padStart(12)}${"journal".padStart(10)}`);
    const first = await churn(emulator.url, offers, WINDOW);
    let done = WINDOW;
    const row = (rate: number) =>
      console.log(
        `${String(done).padEnd(14)}${rate.toFixed(0).padStart(10)}${(rate / first).toFixed(2).padStart(10)}${(rate / disk).toFixed(2).padStart(9)}` +
          `${sizeOf(path.join(dataDir, "state.json")).toString().padStart(12)}${sizeOf(path.join(dataDir, "journal")).toString().padStart(10)}`,
      );
    row(first);
    const keptFirst = await restart();
    const rates: { at: number; rate: number; kept?: number }[] = [];
    while (done < CYCLES) {
      // Windows end on multiples of CHECKPOINT (1,000, 2,000, ...) and at the last cycle.
      const filler = Math.min((Math.floor(done / CHECKPOINT) + 1) * CHECKPOINT, CYCLES) - WINDOW - done;
      if (filler > 0) {
        await churn(emulator.url, offers, filler);
        done += filler;
      }
      const rate = await churn(emulator.url, offers, WINDOW);
      done += WINDOW;
      rates.push({ at: done, rate, kept: done >= 1000 && !rates.some((r) => r.kept !== undefined) ? await restart() : undefined });
      row(rate);
    }
    const kept = await restart();
    const last = rates.at(-1);
    console.log(`\nstate kept (compacted, at a stop): ${keptFirst} bytes after ${WINDOW} cycles, ${kept} after ${done}: ${((kept - keptFirst) / (done - WINDOW)).toFixed(1)} bytes a cycle`);
    if (last) console.log(`ratio of the write rate after ${last.at} cycles to the first ${WINDOW}: ${(last.rate / first).toFixed(3)}`);
    // The acceptance: after the last cycles against after the first 1,000, state kept and write rate.
    const atThousand = rates.find((r) => r.kept !== undefined);
    if (atThousand && last && last.at > atThousand.at) {
      console.log(`after ${atThousand.at} cycles: state kept ${atThousand.kept} bytes, ${atThousand.rate.toFixed(0)} writes/s`);
      console.log(`after ${last.at} cycles: state kept ${kept} bytes, ${last.rate.toFixed(0)} writes/s`);
      console.log(`ratios (after ${last.at} / after ${atThousand.at}): state kept ${(kept / atThousand.kept!).toFixed(3)}, write rate ${(last.rate / atThousand.rate).toFixed(3)}`);
    }
  } finally {
    emulator.child.kill("SIGKILL");
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
