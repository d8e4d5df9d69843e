import { loadAndSettle, Memory, RSS_BOUND_MIB, total } from "../../bench/mixed-load";
import { EmulatorProcess, emulatorProcess } from "../helpers/emulator-process";

/**
 * The emulator gives back what a load took: after 5 s of mixed load (the same as `npm run bench:memory`,
 * which runs it for 5 minutes: the long load lives there), its RSS 10 s after the load is within 50 MB of its
 * RSS before the load.
 */
const LOAD_S = 5;
const SETTLE_S = 10;

let emu: EmulatorProcess;
beforeAll(async () => {
  // The emulator's own memory: no machines, whose processes and sandboxes are not the emulator's heap.
  emu = await emulatorProcess(["--no-ssh"]);
}, 60_000);
afterAll(() => emu?.stop());

it(`comes back within 50 MB of its memory ${SETTLE_S} s after ${LOAD_S} s of mixed load`, async () => {
  const { before, atEnd, after, result } = await loadAndSettle(emu.url, emu.apiKey, { seconds: LOAD_S, workers: 8, settleS: SETTLE_S });
  const show = (m: Memory) => `RSS ${m.rss} MiB, heap ${m.heapUsed} MiB`;
  console.log(`${total(result.calls)} calls in ${result.seconds.toFixed(0)} s; emulator before: ${show(before)}; at the end: ${show(atEnd)}; ${SETTLE_S} s after: ${show(after)}`);
  expect(result.firstErrors).toEqual([]);
  expect(total(result.calls)).toBeGreaterThan(100);
  expect(result.calls["instance destroy"]).toBeGreaterThan(0);
  expect(after.rss - before.rss).toBeLessThanOrEqual(RSS_BOUND_MIB);
}, (LOAD_S + SETTLE_S + 60) * 1000);
