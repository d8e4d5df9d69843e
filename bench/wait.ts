/**
 * Waiting for an instance to run: how late the wait sees it running (p50, p95), and how many requests it makes per
 * second, for boots from 3 s to 5 minutes. Measured against a real emulator over HTTP on its controllable clock
 * (a wait's sleeps move the emulator's time), so five-minute boots take milliseconds and the figures are exact.
 * Beside waitForStatus, in the same run, the common alternative: polling with exponential backoff (1 s, x1.5,
 * at most 30 s).
 *
 *   npm run bench:wait           (BENCH_WAITS=40 per boot length by default)
 */
import { Clock, startEmulator } from "../emulator";
import { GpuRentalClient, hasReached, rentInstance, waitForStatus, WaitClock } from "../sdk";
import { runBench } from "./run";

const WAITS = Number(process.env.BENCH_WAITS ?? 40);
const BOOTS_MS = [3_000, 20_000, 120_000, 300_000];

interface Figures {
  lateP50Ms: number;
  lateP95Ms: number;
  requestsPerSecond: number;
}

type Waiter = (client: GpuRentalClient, id: number, clock: WaitClock, onPoll: () => void) => Promise<void>;

const ours: Waiter = async (client, id, clock, onPoll) => {
  await waitForStatus(client, id, "running", { clock, onPoll });
};

const backoff: Waiter = async (client, id, clock, onPoll) => {
  for (let delay = 1_000; ; delay = Math.min(delay * 1.5, 30_000)) {
    await clock.sleep(delay);
    const instance = await client.instances.get(id);
    onPoll();
    if (instance && hasReached(instance, "running")) return;
  }
};

/** A fixed sequence in [0, 1): the same boots for both ways of waiting. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))];
}

async function measure(waiter: Waiter, bootMs: number): Promise<Figures> {
  const clock = new Clock("frozen");
  const emu = await startEmulator({ clock, rateLimits: "off", offers: WAITS + 20, seed: 3 });
  const waitClock: WaitClock = { now: () => clock.now(), sleep: async (ms) => clock.advance(ms) };
  const client = new GpuRentalClient({ apiUrl: emu.url, apiKey: emu.apiKey });
  const random = seeded(bootMs);
  const late: number[] = [];
  let requests = 0;
  let waitedMs = 0;
  try {
    for (let i = 0; i < WAITS; i++) {
      // Boots differ by ±20%, and the wait starts up to 1 s after the creation (the rest of a program's work).
      const boot = Math.round(bootMs * (0.8 + 0.4 * random()));
      emu.marketplace.lifecycle = { provisioningMs: Math.round(boot / 4), loadingMs: boot - Math.round(boot / 4) };
      const { instanceId } = await rentInstance(client, {}, { image: "bench" });
      const created = clock.now();
      clock.advance(Math.round(random() * 1_000));
      const started = clock.now();
      await waiter(client, instanceId, waitClock, () => requests++);
      late.push(clock.now() - (created + boot));
      waitedMs += clock.now() - started;
      await client.instances.destroy(instanceId);
    }
  } finally {
    await emu.close();
  }
  return { lateP50Ms: percentile(late, 0.5), lateP95Ms: percentile(late, 0.95), requestsPerSecond: requests / (waitedMs / 1000) };
}

async function main(): Promise<void> {
  console.log(`Waiting for running: ${WAITS} waits per boot length, on the emulator's clock`);
  console.log("boot      | waitForStatus: late p50/p95, req/s | backoff (1 s x1.5 to 30 s): late p50/p95, req/s | p95 ratio | req/s ratio");
  for (const bootMs of BOOTS_MS) {
    const a = await measure(ours, bootMs);
    const b = await measure(backoff, bootMs);
    const cell = (f: Figures) => `${(f.lateP50Ms / 1000).toFixed(2)}/${(f.lateP95Ms / 1000).toFixed(2)} s, ${f.requestsPerSecond.toFixed(2)}`;
    console.log(
      `${String(bootMs / 1000).padStart(5)} s   | ${cell(a).padEnd(34)} | ${cell(b).padEnd(47)} | ` +
        `${(a.lateP95Ms / b.lateP95Ms).toFixed(2).padStart(9)} | ${(a.requestsPerSecond / b.requestsPerSecond).toFixed(2).padStart(11)}`,
    );
  }
}

runBench(main);
