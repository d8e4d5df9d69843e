/**
 * What the console page costs the emulator under heavy load. The emulator runs in a process of its own (the built
 * command, with a control token, as a shared runner starts it); a mixed load (bench/mixed-load.ts: searches,
 * instances created, labelled and destroyed, templates, volumes, API keys, over BENCH_WORKERS clients) runs
 * against it in short rounds, each mode in turn: no page open; the page open (what it asks: `GET
 * /_emulator/console?since=<its last reading>` with the token, once a second while shown); ten pages open. Short
 * rounds in turn, many of them, because a shared machine's other work comes and goes over minutes and must weigh
 * on every mode alike. Printed: each mode's calls a second and the emulator's CPU time a call (from /proc) over the
 * whole run, their ratios to the rounds without a page, and (for how noisy the machine was) the median of each
 * round's ratio to its own no-page round. Exits non-zero when one page slows the load by more than 5 % over the
 * whole run.
 *
 *   npm run bench:console     (BENCH_SECONDS=4 a round, BENCH_ROUNDS=20, BENCH_WORKERS=8 by default)
 */
import * as fs from "node:fs";
import { emulatorProcess } from "../test/helpers/emulator-process";
import { mixedLoad, total } from "./mixed-load";
import { runBench } from "./run";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 20));
const WORKERS = Number(process.env.BENCH_WORKERS ?? 8);
const TOKEN = "bench-console-token";
/** The page's own pace (emulator/console/browser/app.ts, POLL_MS). */
const POLL_MS = 1000;
const MODES = { "no page": 0, "page open": 1, "ten pages": 10 } as const;
type Mode = keyof typeof MODES;

/** CPU seconds the process has used so far (user and system), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** `pages` pages reading the console at the page's pace until `stop` resolves; what they read, in bytes and ms. */
async function pagesOpen(url: string, pages: number, stop: Promise<unknown>): Promise<{ reads: number; bytes: number; ms: number }> {
  const seen = { reads: 0, bytes: 0, ms: 0 };
  let stopped = false;
  void stop.finally(() => (stopped = true));
  await Promise.all(
    Array.from({ length: pages }, async (_, i) => {
      await new Promise((resolve) => setTimeout(resolve, (POLL_MS * i) / pages));
      // As the page asks: after its first reading, only the charges made since its last one.
      let since = "";
      while (!stopped) {
        const started = performance.now();
        const res = await fetch(`${url}/_emulator/console${since}`, { headers: { "x-emulator-token": TOKEN } });
        const body = await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`GET /_emulator/console: ${res.status}`);
        since = `?since=${(JSON.parse(Buffer.from(body).toString("utf8")) as { now: number }).now / 1000}`;
        seen.reads++;
        seen.bytes += body.byteLength;
        seen.ms += performance.now() - started;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    }),
  );
  return seen;
}

async function main(): Promise<boolean> {
  const emu = await emulatorProcess(["--no-ssh", "--control-token", TOKEN]);
  try {
    console.log(`the console's cost under a mixed load of ${WORKERS} clients: ${ROUNDS} rounds of ${SECONDS} s per mode (pid ${emu.pid}, the built command)`);
    // Warm-up, not counted: the billing ledger fills to its bound (500 ended instances), the largest page there is.
    await mixedLoad(emu.url, emu.apiKey, { seconds: 15, workers: WORKERS });
    /** Each round's calls a second, by mode. */
    const rounds: Record<Mode, number>[] = [];
    const totals = Object.fromEntries(Object.keys(MODES).map((mode) => [mode, { calls: 0, seconds: 0, cpu: 0, reads: 0, bytes: 0, readMs: 0, errors: 0 }])) as Record<
      Mode,
      { calls: number; seconds: number; cpu: number; reads: number; bytes: number; readMs: number; errors: number }
    >;
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating, each round in a turned order: a machine busy with something else for a while weighs on all alike.
      const order = (Object.keys(MODES) as Mode[]).map((_, i, all) => all[(i + round) % all.length]);
      rounds.push({} as Record<Mode, number>);
      for (const mode of order) {
        const cpuBefore = cpuSeconds(emu.pid);
        const load = mixedLoad(emu.url, emu.apiKey, { seconds: SECONDS, workers: WORKERS });
        const [result, read] = await Promise.all([load, pagesOpen(emu.url, MODES[mode], load)]);
        const t = totals[mode];
        t.cpu += cpuSeconds(emu.pid) - cpuBefore;
        t.calls += total(result.calls);
        t.seconds += result.seconds;
        t.errors += result.errors;
        t.reads += read.reads;
        t.bytes += read.bytes;
        t.readMs += read.ms;
        rounds[round][mode] = total(result.calls) / result.seconds;
      }
    }
    const base = totals["no page"];
    const rate = (t: typeof base) => t.calls / t.seconds;
    const cpuPerCall = (t: typeof base) => (t.cpu / t.calls) * 1e6;
    console.log(`\n${"mode".padEnd(12)}${"calls/s".padStart(10)}${"ratio".padStart(8)}${"CPU µs/call".padStart(14)}${"ratio".padStart(8)}${"page reads".padStart(12)}${"KiB a read".padStart(12)}${"ms a read".padStart(11)}`);
    for (const mode of Object.keys(MODES) as Mode[]) {
      const t = totals[mode];
      console.log(
        `${mode.padEnd(12)}${rate(t).toFixed(0).padStart(10)}${(rate(t) / rate(base)).toFixed(3).padStart(8)}${cpuPerCall(t).toFixed(0).padStart(14)}` +
          `${(cpuPerCall(t) / cpuPerCall(base)).toFixed(3).padStart(8)}${String(t.reads).padStart(12)}${(t.reads ? t.bytes / t.reads / 1024 : 0).toFixed(1).padStart(12)}${(t.reads ? t.readMs / t.reads : 0).toFixed(1).padStart(11)}`,
      );
    }
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const perRound = (mode: Mode) => median(rounds.map((r) => r[mode] / r["no page"]));
    console.log(`\nThe median of the rounds' ratios to the round's own no-page pace (noise): page open ${perRound("page open").toFixed(3)}, ten pages ${perRound("ten pages").toFixed(3)}`);
    const slowdown = 1 - rate(totals["page open"]) / rate(base);
    const errors = Object.values(totals).reduce((sum, t) => sum + t.errors, 0);
    const ok = slowdown <= 0.05 && errors === 0;
    console.log(`With the page open the load runs at ${(100 * (1 - slowdown)).toFixed(1)} % of its pace without it (bound: 95 %); ${errors} calls failed. ${ok ? "PASS" : "FAIL"}`);
    return ok;
  } finally {
    await emu.stop();
  }
}

runBench(main);
