/**
 * The emulator's memory under a long mixed load: the emulator runs in a process of its own (the built
 * command, as the tests start it: test/helpers/emulator-process.ts), a mixed load
 * (bench/mixed-load.ts: searches, instances created, labelled and destroyed, templates, volumes, API keys)
 * runs against it, and its RSS and heap are printed before the load, at its end, and 10 s after it. Exits
 * non-zero if RSS 10 s after the load is more than 50 MB above RSS before it.
 *
 *   npm run bench:memory      (BENCH_SECONDS=300 by default, BENCH_WORKERS=8 clients at once)
 */
import { emulatorProcess } from "../test/helpers/emulator-process";
import { loadAndSettle, Memory, memoryOf, RSS_BOUND_MIB, total } from "./mixed-load";
import { runBench } from "./run";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 300);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 8);
const SETTLE_S = 10;

const line = (label: string, m: Memory) =>
  console.log(`${label.padEnd(26)}${m.rss.toFixed(1).padStart(10)}${m.heapUsed.toFixed(1).padStart(12)}${m.heapTotal.toFixed(1).padStart(13)}${m.external.toFixed(1).padStart(12)}`);

async function main(): Promise<boolean> {
  const emu = await emulatorProcess(["--no-ssh"]);
  try {
    console.log(`emulator memory under ${SECONDS} s of mixed load over ${WORKERS} clients (pid ${emu.pid}, the built command)`);
    let peak: Memory | undefined;
    const { before, atEnd, after, result } = await loadAndSettle(emu.url, emu.apiKey, {
      seconds: SECONDS,
      workers: WORKERS,
      settleS: SETTLE_S,
      onProgress: (elapsed, calls) => {
        memoryOf(emu.url)
          .then((m) => {
            if (!peak || m.rss > peak.rss) peak = m;
            if (Math.round(elapsed) % 30 < 5) console.error(`  ${elapsed.toFixed(0)} s: ${calls} calls, RSS ${m.rss} MiB, heap ${m.heapUsed} MiB`);
          })
          .catch(() => undefined); // a sample missed; the next one comes in 5 s
      },
    });
    if (!peak || before.rss > peak.rss) peak = before;
    const calls = total(result.calls);
    console.log(`${calls} calls in ${result.seconds.toFixed(0)} s (${(calls / result.seconds).toFixed(0)}/s), ${result.errors} failed`);
    for (const [kind, n] of Object.entries(result.calls)) console.log(`  ${kind}: ${n}`);
    for (const message of result.firstErrors) console.log(`  failed: ${message}`);
    console.log(`\n${"MiB".padEnd(26)}${"RSS".padStart(10)}${"heap used".padStart(12)}${"heap total".padStart(13)}${"external".padStart(12)}`);
    line("before the load", before);
    line("peak RSS during it", peak);
    line("at its end", atEnd);
    line(`${SETTLE_S} s after it`, after);
    const grown = after.rss - before.rss;
    console.log(`RSS ${SETTLE_S} s after the load / before it: ${(after.rss / before.rss).toFixed(3)}`);
    const ok = grown <= RSS_BOUND_MIB && result.errors === 0;
    console.log(
      `\nRSS ${SETTLE_S} s after the load minus before it: ${grown.toFixed(1)} MiB (${((grown * 2 ** 20) / 1e6).toFixed(1)} MB; bound 50 MB); ` +
        `heap used: ${(after.heapUsed - before.heapUsed).toFixed(1)} MiB. ${ok ? "PASS" : "FAIL"}`,
    );
    return ok;
  } finally {
    await emu.stop();
  }
}

runBench(main);
