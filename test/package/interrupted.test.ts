import * as path from "node:path";
import { pulumiEnv } from "../../cli/pulumi";
import { installPlugin } from "../../cli/plugin-install";
import { Clock, FaultSpec } from "../../emulator";
import { stackHoldings } from "../../sdk";
import { runCutOff } from "../helpers/cut-off";
import { emulator, TestEmulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";
import { typescriptProgram } from "./own-program";

/**
 * Deploys cut off halfway, as a CI runner cancels a job: every process of the run signalled (SIGTERM, SIGINT or
 * SIGKILL) while the program's instances are being created, then what a user does next: `pulumi up` (after
 * `pulumi cancel` where a SIGKILL left the stack locked). Every trial ends with exactly the instances the program
 * declares in the account, all in the stack's state and running, among them every one the cut-off run rented (kept,
 * or taken over: never rented twice); `destroy` then leaves none. Programs: TypeScript with 4 Instances and a
 * GpuFleet of 4, and YAML with 4 Instances through the plugin. Boots are slowed to an hour by the emulator while a
 * run is cut off, so each signal lands during creation; for the next `up` they take 150 ms.
 *
 * Cheap by design: one install of each program, a fresh emulator and stack per trial, trials side by side, the
 * account's key from the environment (no secret config to set), and each moment chosen to meet several phases at
 * once: instances booting, a rental request under way (held back by the emulator), a rental not sent yet (its
 * offer search held back). The SDK's own tests (test/sdk/interrupted.test.ts) cover the rest without the engine.
 */

const SLOW_BOOTS = { provisioningMs: 3_600_000, loadingMs: 0 };
const QUICK_BOOTS = { provisioningMs: 50, loadingMs: 100 };

/** When a trial cuts its run off: the faults that hold requests back, and what has happened by then. */
interface Moment {
  faults: FaultSpec[];
  /** Whether it has come, in a run of a program declaring `count` instances. */
  reached(emu: TestEmulator, count: number): boolean;
}

const searchHeld = (times: number): FaultSpec => ({ method: "POST", path: "/api/v0/bundles/", kind: "latency", delayMs: 4_000, times });
const rentalHeld: FaultSpec = { method: "PUT", path: "/api/v0/asks/", kind: "latency", delayMs: 2_500, times: 1 };

const MOMENTS = {
  /** Instances booting, a rental request under way (answered within the 5 s it is given), one rental not sent yet. */
  mixed: { faults: [searchHeld(1), rentalHeld], reached: (emu) => emu.marketplace.instances.all().length >= 2 && emu.faults.injected >= 2 },
  /** Everything rented, everything booting. */
  booting: { faults: [], reached: (emu, count) => emu.marketplace.instances.all().length >= count },
  /** The offer search under way (the one the like Instances share, sdk/workflows/offer-pool.ts): nothing rented yet. */
  searching: { faults: [searchHeld(4)], reached: (emu) => emu.faults.injected >= 1 },
} satisfies Record<string, Moment>;

/** The service failing on its own while the program deploys: polls answered 500, listings cut, searches and rentals refused, clean-ups 503. */
const SERVICE_FAILING: FaultSpec[] = [
  { method: "GET", path: "/api/v0/instances/", kind: "status", status: 500, times: 40 },
  { method: "GET", path: "/api/v1/instances/", kind: "drop", times: 4 },
  { method: "POST", path: "/api/v0/bundles/", kind: "status", status: 429, retryAfterSeconds: 1, times: 4 },
  { method: "PUT", path: "/api/v0/asks/", kind: "status", status: 500, times: 3 },
  { method: "PUT", path: "/api/v0/asks/", kind: "lost_response", times: 1 },
  { method: "DELETE", path: "/api/v0/instances/", kind: "status", status: 503, times: 14 },
];

/** `count` Instances (default 4) of `gpus` GPUs, and with `fleet` a GpuFleet of 4 beside them. */
const TYPESCRIPT = `import * as pulumi from "@pulumi/pulumi";
import { GpuFleet, Instance } from "gpu-rental/provider";

const config = new pulumi.Config();
const gpuCount = config.getNumber("gpus") ?? 1;
export const ids = Array.from({ length: config.getNumber("count") ?? 4 }, (_, i) =>
  new Instance(\`worker-\${i}\`, { gpuCount, image: "pytorch/pytorch", label: \`worker-\${i}\` }).instanceId);
export const members = config.getBoolean("fleet") ? new GpuFleet("pool", { size: 4, gpuCount, image: "pytorch/pytorch" }).instanceIds : [];
`;

const YAML = `name: interrupted-yaml
runtime: yaml
resources:
${[0, 1, 2, 3].map((i) => `  worker-${i}:\n    type: gpu-rental:index:Instance\n    properties:\n      gpuCount: 1\n      image: pytorch/pytorch\n      label: worker-${i}\n`).join("")}`;

/** The instances the stack's state holds (Instances and fleet members), read as `gpu-rental sweep --stack` reads them. */
async function heldByState(stack: TestStack): Promise<number[]> {
  return stackHoldings(await stack.ok("stack", "export")).instances.sort();
}

function liveIds(emu: TestEmulator): number[] {
  return emu.marketplace.instances.all().map((i) => i.id).sort();
}

interface Scene {
  emu: TestEmulator;
  stack: TestStack;
  /** The next `up`, with quick boots and no faults, after `pulumi cancel` when `locked` (a SIGKILL leaves the stack locked). */
  nextUp(locked: boolean): Promise<void>;
  /** Exactly `count` instances in the account, all running, all in the stack's state; their ids. */
  expectExactly(count: number): Promise<number[]>;
}

/** A fresh emulator (boots slowed to an hour) and stack of `program`, its key in the environment; both removed after `use`. */
async function scene<T>(programs: Promise<UserProgram>, options: { plugin?: boolean; config?: Record<string, string> }, use: (scene: Scene) => Promise<T>): Promise<T> {
  const program = await programs;
  const emu = await emulator({ clock: new Clock("running"), lifecycle: SLOW_BOOTS });
  const stack = new TestStack(`cut-${Math.random().toString(36).slice(2, 8)}`, { GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: emu.apiKey }, program.dir);
  try {
    await stack.init(options.config ?? {}, {});
    if (options.plugin) installPlugin({ pulumi: path.join(stack.ws.toolchain.bin, "pulumi"), env: pulumiEnv(stack.ws), link: true, log: () => undefined });
    return await use({
      emu,
      stack,
      async nextUp(locked) {
        emu.faults.clear();
        emu.marketplace.lifecycle = QUICK_BOOTS;
        if (locked) await stack.ok("cancel", "--yes");
        await stack.ok("up", "--yes");
      },
      async expectExactly(count) {
        const live = liveIds(emu);
        expect(live).toHaveLength(count);
        expect(await heldByState(stack)).toEqual(live);
        expect((await emu.client().instances.list()).map((i) => i.actual_status)).toEqual(live.map(() => "running"));
        return live;
      },
    });
  } finally {
    await stack.remove();
    await emu.close();
  }
}

/**
 * One trial: `up` cut off at `moment` by `signal` to every process; the next `up`, which must end with exactly
 * `count` instances, all in the state and running, among them every one the cut-off run rented; `destroy`.
 */
async function trial(programs: Promise<UserProgram>, signal: NodeJS.Signals, moment: Moment, options: { plugin?: boolean; config?: Record<string, string>; count?: number } = {}) {
  const count = options.count ?? 4;
  return scene(programs, options, async ({ emu, stack, nextUp, expectExactly }) => {
    for (const fault of moment.faults) emu.faults.add(fault);
    const cut = await runCutOff(stack, ["up", "--yes"], signal, () => moment.reached(emu, count));
    expect({ signalled: cut.signalled, output: cut.signalled || cut.output }).toEqual({ signalled: true, output: true });
    // A SIGTERM or SIGINT is answered within the runner's grace: no SIGKILL was needed, and nothing rented is
    // outside the state, even before the next up.
    expect(cut.killed).toBe(false);
    const rented = liveIds(emu);
    // The state names only instances the account holds; answered within the grace (not SIGKILL), all of them,
    // before the next up finds any. Both checked on every trial.
    const held = await heldByState(stack);
    expect(held.filter((id) => !rented.includes(id))).toEqual([]);
    expect({ signal, everyRentalInState: signal === "SIGKILL" || rented.every((id) => held.includes(id)) }).toEqual({ signal, everyRentalInState: true });

    await nextUp(signal === "SIGKILL");
    expect(await expectExactly(count)).toEqual(expect.arrayContaining(rented));
    await stack.ok("destroy", "--yes");
    expect(liveIds(emu)).toEqual([]);
    return cut;
  });
}

/** A program made once for the trials of a describe (which run side by side, before any beforeAll), removed after them. */
function sharedProgram(make: () => Promise<UserProgram>): Promise<UserProgram> {
  const made = make();
  afterAll(async () => (await made.catch(() => undefined))?.remove());
  return made;
}

describe("a TypeScript program of 4 Instances (and a GpuFleet of 4), cut off during creation", () => {
  const program = sharedProgram(() => typescriptProgram("interrupted", TYPESCRIPT));
  const withFleet = { config: { fleet: "true" }, count: 8 };

  it.concurrent("SIGTERM while instances boot, a rental is under way and another not sent yet", async () => {
    const cut = await trial(program, "SIGTERM", MOMENTS.mixed, withFleet);
    expect(cut.output).toMatch(/kept in the stack's state/);
  }, 300_000);

  it.concurrent("SIGKILL while everything boots: the next up takes over what the killed run rented", async () => {
    await trial(program, "SIGKILL", MOMENTS.booting, withFleet);
  }, 300_000);

  it.concurrent("SIGINT while the offer searches are under way: nothing rented, and nothing sent after", async () => {
    await trial(program, "SIGINT", MOMENTS.searching);
  }, 300_000);

  it.concurrent("under the service's own failures, whatever up ends with, every instance in the account is in the state; the next up ends with 4", async () => {
    await scene(program, {}, async ({ emu, stack, nextUp, expectExactly }) => {
      emu.marketplace.lifecycle = QUICK_BOOTS;
      for (const fault of SERVICE_FAILING) emu.faults.add(fault);
      // The first instance rented fails its boot: its clean-up destroy meets the 503s.
      const failing = setInterval(() => {
        const [first] = emu.marketplace.instances.all();
        if (!first) return;
        clearInterval(failing);
        emu.marketplace.instances.fail(first.id, "exited", "image pull failed");
      }, 10);
      await stack.run("up", "--yes");
      clearInterval(failing);
      expect(await heldByState(stack)).toEqual(liveIds(emu));
      expect(emu.faults.injected).toBeGreaterThan(20);
      await nextUp(false);
      await expectExactly(4);
      await stack.ok("destroy", "--yes");
      expect(liveIds(emu)).toEqual([]);
    });
  }, 300_000);

  it.concurrent("a replacement (new criteria) killed while its new half boots: the next up rents nothing more", async () => {
    await scene(program, { config: { count: "1" } }, async ({ emu, stack, nextUp, expectExactly }) => {
      emu.marketplace.lifecycle = QUICK_BOOTS;
      await stack.ok("up", "--yes");
      const [old] = await expectExactly(1);
      emu.marketplace.lifecycle = SLOW_BOOTS;
      await stack.ok("config", "set", "gpus", "2");
      // Create before delete: the new half is rented while the old one still runs.
      const cut = await runCutOff(stack, ["up", "--yes"], "SIGKILL", () => liveIds(emu).length >= 2);
      expect({ signalled: cut.signalled, output: cut.signalled || cut.output }).toEqual({ signalled: true, output: true });
      const [, replacement] = liveIds(emu);
      await nextUp(true);
      // The new half was taken over (not rented again); the old half was destroyed by the replacement, not by the create.
      expect(await expectExactly(1)).toEqual([replacement]);
      expect(replacement).not.toBe(old);
      expect(emu.marketplace.stats.offersAccepted).toBe(2);
      await stack.ok("destroy", "--yes");
    });
  }, 300_000);
});

describe("a YAML program of 4 Instances through the plugin, cut off during creation", () => {
  const program = sharedProgram(() => UserProgram.create("interrupted-yaml", { "Pulumi.yaml": YAML }, []));

  it.concurrent("SIGTERM while instances boot, a rental is under way and another not sent yet", async () => {
    await trial(program, "SIGTERM", MOMENTS.mixed, { plugin: true });
  }, 300_000);

  it.concurrent("SIGKILL while all four boot", async () => {
    await trial(program, "SIGKILL", MOMENTS.booting, { plugin: true });
  }, 300_000);
});
