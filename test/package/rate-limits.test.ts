import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";
import { pythonPluginProgram } from "./python-plugin-program";
import { UserProgram } from "../helpers/user-program";
import { typescriptProgram } from "./own-program";

/**
 * Many rentals in one `pulumi up` under the live service's own rate limits, per key: instance creation one call per
 * 3 s, offer search ten a minute (the emulator's defaults). A TypeScript program of 32 Instances (dynamic
 * providers), a Python program of 32 through the plugin, and a GpuFleet of 32, each against an emulator of its own,
 * side by side (they mostly wait for the limit). Each `up` (with its preview, as a user runs it) makes all 32, paced
 * and not refused, in at most 1.25 times what the creation limit alone takes; a second `up` changes nothing and
 * searches nothing.
 */
const COUNT = 32;
const CREATION_LIMIT_MS = COUNT * 3_000;
const EMULATOR = { clock: new Clock("running"), rateLimits: "service", offers: 400, lifecycle: { provisioningMs: 50, loadingMs: 100 } } as const;

const TS_INSTANCES = `import { Instance } from "gpu-rental/provider";

export const ids = Array.from({ length: ${COUNT} }, (_, i) =>
  new Instance(\`worker-\${i}\`, { gpuCount: 1, image: "pytorch/pytorch", label: \`worker-\${i}\` }).instanceId,
);
`;

const TS_FLEET = `import { GpuFleet } from "gpu-rental/provider";

export const ids = new GpuFleet("workers", { size: ${COUNT}, gpuCount: 1, image: "pytorch/pytorch", labelPrefix: "workers" }).instanceIds;
`;

const PY_INSTANCES = `import pulumi
import pulumi_gpu_rental as gpu_rental

workers = [gpu_rental.Instance(f"worker-{i}", gpu_count=1, image="pytorch/pytorch", label=f"worker-{i}") for i in range(${COUNT})]
pulumi.export("ids", [w.instance_id for w in workers])
`;

/** One program on its own stack against its own emulator, limited as the live service is. */
interface Run {
  name: string;
  emu: TestEmulator;
  stack: TestStack;
  program: UserProgram;
}

async function start(name: string, program: Promise<UserProgram>): Promise<Run> {
  const [emu, made] = await Promise.all([emulator(EMULATOR), program]);
  const stack = new TestStack(`${name}-${process.pid}`, {}, made.dir);
  await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey });
  return { name, emu, stack, program: made };
}

const searches = (run: Run) => run.emu.marketplace.stats.offerSearches ?? 0;

describe(`${COUNT} rentals in one pulumi up under the service's rate limits (creation 1 per 3 s, search 10 a minute)`, () => {
  let runs: Run[] = [];

  beforeAll(async () => {
    runs = await Promise.all([
      start("ts-instances", typescriptProgram("ts-many", TS_INSTANCES)),
      start("py-instances", pythonPluginProgram("py-many", { "__main__.py": PY_INSTANCES })),
      start("ts-fleet", typescriptProgram("ts-fleet", TS_FLEET)),
    ]);
  }, 600_000);
  afterAll(async () => {
    await Promise.all(runs.map(async (run) => {
      await run.stack.dispose();
      await run.emu.close();
      run.program.remove();
    }));
  }, 300_000);

  it("makes all of them in one up, paced not refused, within 1.25x the creation limit; a second up changes and searches nothing", async () => {
    const ups = await Promise.all(runs.map(async (run) => {
      const started = Date.now();
      const out = await run.stack.ok("up", "--yes", "--skip-preview=false");
      return { run, out, seconds: (Date.now() - started) / 1000, searches: searches(run) };
    }));
    for (const { run, out, seconds, searches: made } of ups) {
      const refused = run.emu.marketplace.rateLimits.refused;
      console.log(`${run.name}: up of ${COUNT} in ${seconds.toFixed(1)} s (limit alone ${CREATION_LIMIT_MS / 1000} s), ${made} searches, ` +
        `${refused.instance_create ?? 0} creations and ${refused.offer_search ?? 0} searches answered 429 and waited out`);
      const held = run.emu.marketplace.instances.all();
      expect([run.name, held.length, new Set(held.map((i) => i.offer.id)).size]).toEqual([run.name, COUNT, COUNT]);
      const { offersUnavailable, offersLostToContention } = run.emu.marketplace.stats;
      expect([run.name, offersUnavailable - offersLostToContention]).toEqual([run.name, 0]);
      expect((await run.stack.outputs()).ids).toHaveLength(COUNT);
      // Paced and shown as progress, never an error.
      expect(out).toMatch(/waiting for the service's limit \(PUT \/api\/v0\/asks\/\{id\}\/\): \d+ queued/);
      expect([run.name, out]).not.toEqual([run.name, expect.stringMatching(/error|rate_limited|failed with 429/i)]);
      expect([run.name, seconds]).toEqual([run.name, expect.any(Number)]);
      expect(seconds).toBeLessThanOrEqual((1.25 * CREATION_LIMIT_MS) / 1000);
      // A handful of searches (the previews' and the rentals' shared ones), not one or two per Instance.
      expect(made).toBeLessThanOrEqual(6);
    }

    const again = await Promise.all(runs.map(async (run) => {
      const before = searches(run);
      const out = await run.stack.ok("up", "--yes", "--skip-preview=false", "--expect-no-changes");
      return { run, out, searches: searches(run) - before };
    }));
    for (const { run, searches: made } of again) {
      expect([run.name, made]).toEqual([run.name, 0]);
      expect(run.emu.marketplace.instances.all()).toHaveLength(COUNT);
    }
  }, 900_000);
});
