/**
 * Durable writes against history: the emulator with `--data-dir` runs create+destroy cycles (two acknowledged,
 * flushed writes each) with nothing left alive.
 *
 * Phase 1, history: CYCLES cycles, the emulator restarted at each checkpoint (every 1,000th cycle), where the
 * state it keeps (compacted at the stop) is measured; the folder is copied as it was after the first 1,000
 * cycles and after the last.
 *
 * Phase 2, the comparison: the write cost of the two copies, measured the same way and alternately (A B, B A, A B, ...),
 * so a busy machine weighs on both alike. Each measurement starts a fresh emulator on a fresh copy of the folder
 * (same process age for both: a young process is slower until V8 has compiled its hot paths), warms it up with
 * WARM cycles, then measures WINDOW cycles: writes a second, the emulator's CPU time a write, and the bytes a
 * write puts on the disk (journal records, and snapshots when it is compacted). The medians of ROUNDS rounds
 * are compared, and the median of each round's own ratio (both sides of a round saw the same machine load). Baseline of the same run: bare flushed
 * appends in the same folder (what the disk allows at all).
 *
 *   npm run bench:durable     (BENCH_CYCLES=10000, BENCH_ROUNDS=7, BENCH_WARM=1000, BENCH_WINDOW=600,
 *                              BENCH_WORKERS=4)
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { EmulatorProcess, emulatorProcess } from "../test/helpers/emulator-process";
import { runBench } from "./run";

const CYCLES = Number(process.env.BENCH_CYCLES ?? 10000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const WARM = Number(process.env.BENCH_WARM ?? 1000);
const WINDOW = Number(process.env.BENCH_WINDOW ?? 600);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 4);
const CHECKPOINT = 1000;
const KEY = "bench-durable-key-0123";

/** `gpu-rental emulator` on a data folder. */
type Emulator = EmulatorProcess & { dir: string };

const start = async (dir: string): Promise<Emulator> => ({ ...(await emulatorProcess(["--data-dir", dir, "--api-key", KEY, "--no-ssh"])), dir });

/** Stops it cleanly: the emulator folds its journal into the snapshot; the size of the state it keeps. */
async function stop(emulator: Emulator): Promise<number> {
  const gone = new Promise((resolve) => emulator.process.once("exit", resolve));
  emulator.process.kill("SIGTERM");
  await gone;
  return sizeOf(path.join(emulator.dir, "state.json"));
}

async function call(url: string, method: string, body?: unknown): Promise<any> {
  const res = await fetch(url, { method, headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const parsed = await res.json();
  if (res.status !== 200) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/**
 * `cycles` create+destroy cycles over WORKERS clients, each on an offer of its own. `written`, when given, is
 * told the bytes the journal grew by after each write; a journal that shrank was compacted, and then what was
 * written is the new snapshot and what the journal holds.
 */
async function churn(emulator: Emulator, cycles: number, written?: (bytes: number) => void): Promise<void> {
  const found = await call(`${emulator.url}/api/v0/bundles/`, "POST", { limit: WORKERS, order: [["dph_total", "asc"]] });
  const journal = path.join(emulator.dir, "journal");
  let last = sizeOf(journal);
  const sample = () => {
    if (!written) return;
    const now = sizeOf(journal);
    written(now >= last ? now - last : now + sizeOf(path.join(emulator.dir, "state.json")));
    last = now;
  };
  let left = cycles;
  await Promise.all(
    found.offers.map(async ({ id: offer }: { id: number }) => {
      while (left > 0) {
        left--;
        const { new_contract: id } = await call(`${emulator.url}/api/v0/asks/${offer}/`, "PUT", { image: "bench", disk: 8 });
        sample();
        await call(`${emulator.url}/api/v0/instances/${id}/`, "DELETE");
        sample();
      }
    }),
  );
}

/** User plus system CPU time of a process, in ms (Linux). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

interface Cost {
  rate: number;
  /** The rate over bare flushed appends measured in the same round: the share of the disk's own rate. */
  ofDisk?: number;
  cpuPerWrite: number;
  bytesPerWrite: number;
}

/** The cost of a write on a fresh emulator over a fresh copy of `folder`, after WARM cycles. */
async function measure(folder: string): Promise<Cost> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-bench-copy-"));
  fs.cpSync(folder, dir, { recursive: true });
  const emulator = await start(dir);
  try {
    await churn(emulator, WARM);
    let bytes = 0;
    const [cpu0, t0] = [cpuMs(emulator.process.pid!), process.hrtime.bigint()];
    await churn(emulator, WINDOW, (grown) => (bytes += grown));
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const writes = 2 * WINDOW;
    return { rate: writes / seconds, cpuPerWrite: (cpuMs(emulator.process.pid!) - cpu0) / writes, bytesPerWrite: bytes / writes };
  } finally {
    await stop(emulator);
    fs.rmSync(dir, { recursive: true, force: true });
  }
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
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const pad = (value: string | number, width: number) => String(value).padStart(width);

/** Phase 1: CYCLES cycles; the state kept at each checkpoint; copies of the folder after 1,000 and after the last. */
async function history(work: string): Promise<{ early: string; late: string; kept: Map<number, number> }> {
  const dir = path.join(work, "live");
  const [early, late] = [path.join(work, "after-1000"), path.join(work, `after-${CYCLES}`)];
  const kept = new Map<number, number>();
  let emulator = await start(dir);
  for (let done = 0; done < CYCLES; ) {
    const step = Math.min(CHECKPOINT, CYCLES - done);
    await churn(emulator, step);
    done += step;
    kept.set(done, await stop(emulator));
    if (done === CHECKPOINT) fs.cpSync(dir, early, { recursive: true });
    process.stdout.write(`  after ${pad(done, 6)} cycles: state kept ${pad(kept.get(done)!, 7)} bytes\n`);
    if (done < CYCLES) emulator = await start(dir);
  }
  fs.cpSync(dir, late, { recursive: true });
  return { early, late, kept };
}

async function main(): Promise<void> {
  if (CYCLES <= CHECKPOINT) throw new Error(`BENCH_CYCLES must be over ${CHECKPOINT}`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-bench-durable-"));
  try {
    console.log(`durable writes: ${CYCLES} create+destroy cycles (2 writes each, nothing left alive), ${WORKERS} clients\n`);
    console.log("phase 1, history (the emulator restarted at each checkpoint):");
    const { early, late, kept } = await history(work);
    console.log(`\nphase 2, write cost after 1000 cycles (A) and after ${CYCLES} (B), alternately: fresh emulator on a fresh copy, ${WARM} cycles warm-up, ${WINDOW} measured`);
    console.log(`${"round".padEnd(8)}${"A writes/s".padStart(12)}${"B writes/s".padStart(12)}${"A cpu ms/w".padStart(12)}${"B cpu ms/w".padStart(12)}${"A B/write".padStart(11)}${"B B/write".padStart(11)}${"disk/s".padStart(9)}`);
    const [a, b]: Cost[][] = [[], []];
    for (let round = 1; round <= ROUNDS; round++) {
      // A B, then B A: a machine speeding up or slowing down across the run favours neither side.
      if (round % 2) {
        a.push(await measure(early));
        b.push(await measure(late));
      } else {
        b.push(await measure(late));
        a.push(await measure(early));
      }
      const disk = bareAppends(work, 1000);
      const [x, y] = [a.at(-1)!, b.at(-1)!];
      [x.ofDisk, y.ofDisk] = [x.rate / disk, y.rate / disk];
      console.log(
        `${String(round).padEnd(8)}${pad(x.rate.toFixed(0), 12)}${pad(y.rate.toFixed(0), 12)}${pad(x.cpuPerWrite.toFixed(2), 12)}${pad(y.cpuPerWrite.toFixed(2), 12)}` +
          `${pad(x.bytesPerWrite.toFixed(0), 11)}${pad(y.bytesPerWrite.toFixed(0), 11)}${pad(disk.toFixed(0), 9)}`,
      );
    }
    // Medians of each side, and the median of the rounds' own ratios (B / A of one round: the same machine load).
    const figure = (name: string, of: (c: Cost) => number, digits: number) => {
      const [x, y] = [median(a.map(of)), median(b.map(of))];
      const paired = median(a.map((c, i) => of(b[i]) / of(c)));
      console.log(`${name.padEnd(28)}${pad(x.toFixed(digits), 12)}${pad(y.toFixed(digits), 12)}${pad((y / x).toFixed(3), 9)}${pad(paired.toFixed(3), 15)}`);
    };
    console.log(`\n${"".padEnd(28)}${pad("after 1000", 12)}${pad(`after ${CYCLES}`, 12)}${pad("ratio", 9)}${pad("round ratios", 15)}`);
    const [keptEarly, keptLate] = [kept.get(CHECKPOINT)!, kept.get(CYCLES)!];
    console.log(`${"state kept, bytes".padEnd(28)}${pad(keptEarly, 12)}${pad(keptLate, 12)}${pad((keptLate / keptEarly).toFixed(3), 9)}`);
    figure("writes/s", (c) => c.rate, 0);
    figure("writes/s / bare appends/s", (c) => c.ofDisk!, 3);
    figure("emulator cpu ms/write", (c) => c.cpuPerWrite, 3);
    figure("bytes written/write", (c) => c.bytesPerWrite, 1);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

runBench(main);
