import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { Clock } from "../../emulator";
import { HOURS_PER_MONTH } from "../../emulator/domain/catalogue";
import { ConfigurationError, rentInstance, userOnstart, waitForStatus, withWatchdog } from "../../sdk";
import { GPU_FLEET, INSTANCE, direct } from "../../provider/lifecycle";
import { diffInstanceSpec } from "../../provider/lifecycle/instance";
import { emulator, http, TestEmulator } from "../helpers/emulator";
import { stepMachines } from "../ssh/machines";
import { scratch } from "../helpers/paths";

const Instance = direct(INSTANCE);
const Fleet = direct(GPU_FLEET);

const run = promisify(execFile);
const DIST = path.resolve(__dirname, "..", "..", "dist", "sdk", "index.js");
const HOUR = 3_600_000;

/**
 * Instances that end themselves (sdk/workflows/watchdog.ts): a watchdog started from onstart ends them with their
 * own key. Its time is its machine's, which is the emulator's clock (its `date` and `sleep`): the clock is frozen
 * and the tests move it, so what is charged and when an instance ends are exact, whatever the machine's load; they
 * wait (real time, bounded) only for the watchdogs, real processes, to take each step.
 */
describe("watchdog: maxLifetime and idleTimeout", () => {
  let emu: TestEmulator;
  let work: ReturnType<typeof scratch>;

  beforeAll(async () => {
    work = scratch("watchdog");
    emu = await emulator({
      clock: new Clock("frozen"),
      lifecycle: { provisioningMs: 0, loadingMs: 0 },
      ssh: { sandboxes: path.join(work.dir, "machines"), hostKeyFile: path.join(work.dir, "host", "key") },
    });
  });
  afterAll(async () => {
    await emu?.close();
    work?.remove();
  });

  const view = async (id: number) => (await http(emu.url, "GET", `/api/v0/instances/${id}/`, { key: emu.apiKey })).body.instances;
  const charge = async (id: number) =>
    ((await http(emu.url, "GET", "/api/v0/charges/?limit=100", { key: emu.apiKey })).body.results as any[]).find((r) => r.metadata.instance_id === id);
  const record = (id: number) => emu.marketplace.instances.all().find((i) => i.id === id);
  /** Waits (real time: the watchdog is a real process) until `done`, at most `ms`; returns the wall time it took. */
  const until = async (done: () => Promise<boolean>, ms: number, what: string) => {
    const started = Date.now();
    for (let polls = 0; Date.now() - started < ms && polls < 10_000; polls++) {
      if (await done()) return (Date.now() - started) / 1000;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`${what}: not after ${ms} ms`);
  };

  /** Rents from a separate node process, which exits once the instance runs: nothing of the renter is left. */
  const rentFromAnotherProcess = async (lifetime: Record<string, unknown>, onstart?: string) => {
    const program = `
      const { GpuRentalClient, rentInstance, waitForStatus } = require(${JSON.stringify(DIST)});
      (async () => {
        const client = new GpuRentalClient({ apiUrl: process.env.URL, apiKey: process.env.KEY });
        const rented = await rentInstance(client, {}, { image: "ubuntu:22.04", runtype: "ssh_direct", disk: 40, onstart: process.env.ONSTART || undefined }, { lifetime: JSON.parse(process.env.LIFETIME) });
        await waitForStatus(client, rented.instanceId, "running");
        console.log(JSON.stringify({ id: rented.instanceId, at: Date.now() }));
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const { stdout } = await run(process.execPath, ["-e", program], {
      env: { ...process.env, URL: emu.url, KEY: emu.apiKey, LIFETIME: JSON.stringify(lifetime), ONSTART: onstart ?? "" },
      timeout: 60_000,
    });
    return JSON.parse(stdout) as { id: number; at: number };
  };

  it("maxLifetime: destroys itself after the renting process is gone, billed for its lifetime exactly; the user's onstart ran as written", async () => {
    if (!fs.existsSync(DIST)) throw new Error("dist/ is not built: run `npm run build` (pretest does)");
    const onstart = 'echo "user onstart $CONTAINER_ID"; echo done > mine.txt';
    const [destroyed, stopped] = await Promise.all([
      rentFromAnotherProcess({ maxLifetime: "4s" }, onstart),
      rentFromAnotherProcess({ maxLifetime: "4s", onLifetimeEnd: "stop" }),
    ]);
    const storageOf = (id: number) => ((record(id)!.offer.storage_cost ?? 0) * 40) / HOURS_PER_MONTH;
    const { pricePerHour } = record(destroyed.id)!;
    const storagePerHour = storageOf(destroyed.id);
    // The onstart output is the user's, exactly: the watchdog writes to its own log.
    const machine = (await http(emu.url, "GET", `/_emulator/instances/${destroyed.id}/machine`)).body;
    expect(machine.onstart.output).toBe(`user onstart ${destroyed.id}\n`);
    expect(fs.readFileSync(path.join(machine.sandbox, "mine.txt"), "utf8")).toBe("done\n");
    // The watchdog runs beside onstart, not before it: once it waits on the clock, it has said what it watches.
    await stepMachines(emu, [destroyed.id], 0);
    expect(fs.readFileSync(path.join(machine.sandbox, ".gpu-rental-watchdog.log"), "utf8")).toContain(`watchdog of instance ${destroyed.id}: maxLifetime 4s, then destroy`);

    // 3 s on: both still run. The fourth second ends their lifetimes (the boot took no time on the frozen clock).
    await stepMachines(emu, [destroyed.id, stopped.id], 3_000);
    expect([await view(destroyed.id), await view(stopped.id)].map((v) => v?.actual_status)).toEqual(["running", "running"]);
    await stepMachines(emu, [destroyed.id, stopped.id], 1_000);
    await until(async () => record(destroyed.id) === undefined, 30_000, "destroyed by its watchdog");
    const row = await charge(destroyed.id);
    // Charged from creation to the end: its 4 s lifetime, to the second.
    expect(row.end - row.start).toBe(4);
    expect(row.amount).toBeCloseTo((4 / 3600) * (pricePerHour + storagePerHour), 6);
    emu.marketplace.clock.advance(HOUR);
    expect((await charge(destroyed.id)).amount).toBe(row.amount);

    await until(async () => (await view(stopped.id))?.actual_status === "exited", 30_000, "stopped by its watchdog");
    const stoppedView = await view(stopped.id);
    expect(stoppedView.cur_state).toBe("stopped");
    const stoppedStorage = storageOf(stopped.id);
    const before = (await charge(stopped.id)).amount;
    emu.marketplace.clock.advance(HOUR);
    const after = (await charge(stopped.id)).amount;
    // Stopped: disk only from then on, an hour of it.
    expect(after - before).toBeCloseTo(stoppedStorage, 6);
  }, 180_000);

  it("idleTimeout: at 0 % the instance ends at the first check past the timeout; at 90 % it runs through three timeouts", async () => {
    const client = emu.client();
    const rent = async (threshold: number) => {
      const rented = await rentInstance(client, {}, { image: "ubuntu:22.04", runtype: "ssh_direct" }, { lifetime: { idleTimeout: "4s", idleThreshold: threshold, idleAction: "destroy" } });
      await waitForStatus(client, rented.instanceId, "running");
      return rented.instanceId;
    };
    const [idle, busy] = await Promise.all([rent(10), rent(50)]);
    // Both watchdogs have read their GPUs busy (the default) at boot, and sleep a check interval (1 s).
    await stepMachines(emu, [idle, busy], 0);
    const setAt = emu.marketplace.clock.now();
    await Promise.all([
      http(emu.url, "PUT", `/_emulator/instances/${idle}/gpus`, { body: { utilization: 0 } }),
      http(emu.url, "PUT", `/_emulator/instances/${busy}/gpus`, { body: { utilization: 90 } }),
    ]);
    // Three timeouts, a check interval at a time; the idle one ends at the check 4 s after its last busy reading.
    const running: boolean[][] = [];
    for (let second = 1; second <= 12; second++) {
      await stepMachines(emu, [idle, busy], 1_000);
      running.push([record(idle) !== undefined, (await view(busy))?.actual_status === "running"]);
    }
    expect(running).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((second) => [second < 4, true]));
    expect((await charge(idle)).end - setAt / 1000).toBe(4);
    await client.instances.destroy(busy);
  }, 180_000);

  it("refuses runtype args (no onstart runs) before renting, and composes around the user's onstart", () => {
    expect(() => withWatchdog({ image: "x", runtype: "args" }, { maxLifetime: "1h" }, "http://service")).toThrow(ConfigurationError);
    expect(() => withWatchdog({ image: "x" }, { maxLifetime: "1h" }, "http://service")).toThrow(/runtype args runs no onstart/);
    expect(() => withWatchdog({ image: "x", runtype: "ssh" }, { maxLifetime: "soon" }, "http://service")).toThrow(/not a duration/);
    const composed = withWatchdog({ image: "x", runtype: "ssh", onstart: "set -e\npython train.py" }, { maxLifetime: "6h" }, "http://service");
    expect(composed.onstart).toMatch(/python train.py$/);
    expect(userOnstart(composed.onstart)).toBe("set -e\npython train.py");
  });

  it("Instance resource: refuses args at check, records a new lifetime in place (the watchdog keeps its own), ends itself", async () => {
    const args = Instance.check({ image: "x", runtype: "args", maxLifetime: "1h" });
    expect(args.failures).toEqual([expect.objectContaining({ property: "runtype", reason: expect.stringContaining("runtype args runs no onstart") })]);
    expect(Instance.check({ image: "x", maxLifetime: "an hour" }).failures[0]).toMatchObject({ property: "maxLifetime" });
    expect(Instance.check({ image: "x", maxLifetime: "2d", idleTimeout: "15m", idleThreshold: 5 }).failures).toEqual([]);
    const base = { image: "ubuntu:22.04", maxLifetime: "3s", onstart: "echo mine" };
    expect(diffInstanceSpec(base, { ...base, maxLifetime: "6h", onLifetimeEnd: "stop" })).toMatchObject({ replaces: [], updates: ["maxLifetime", "onLifetimeEnd"] });

    const lines: string[] = [];
    const created = await Instance.create(base, { client: emu.client(), log: (line) => lines.push(line) });
    expect(created.outs.lifetimeInEffect).toBe("maxLifetime 3s, then destroy");
    expect(userOnstart(record(Number(created.id))!.config.onstart)).toBe("echo mine");
    const updated = await Instance.update(created.id, created.outs, { ...base, maxLifetime: "6h" }, { client: emu.client(), log: (line) => lines.push(line) });
    expect(updated.lifetimeInEffect).toBe("maxLifetime 3s, then destroy");
    expect(lines.join("\n")).toContain("its watchdog keeps the lifetime it was started with (maxLifetime 3s, then destroy)");
    await stepMachines(emu, [Number(created.id)], 3_000);
    await until(async () => record(Number(created.id)) === undefined, 30_000, "ended by its watchdog");
  }, 120_000);
});

/**
 * An emulator without machines runs no onstart, so no watchdog: preview warns that the policy is not enforced
 * there, and a created instance reports no lifetime in effect. Where the service cannot say (the live service, an
 * emulator whose control API is off), nothing is claimed either way.
 */
describe("a lifetime policy where no watchdog can run", () => {
  const policy = { image: "ubuntu:22.04", runtype: "ssh_direct", maxLifetime: "90s" };

  it("is warned of at preview, and not reported in effect once created", async () => {
    const emu = await emulator({ lifecycle: { provisioningMs: 0, loadingMs: 0 } });
    try {
      const [warning] = await Instance.warnings(policy, { client: emu.client() });
      expect(warning).toBe(
        `maxLifetime 90s, then destroy: not enforced, because the emulator at ${emu.url} runs no onstart (the emulator was started without its machines (--no-ssh)); ` +
          "no watchdog will end the instance, and lifetimeInEffect will be empty. Start the emulator with its machines (without --no-ssh, on Linux), or end the instance yourself (pulumi destroy).",
      );
      expect(await Fleet.warnings({ ...policy, size: 2 }, { client: emu.client() })).toEqual([warning]);
      expect(await Instance.warnings({ image: "ubuntu:22.04", runtype: "ssh_direct" }, { client: emu.client() })).toEqual([]);
      const lines: string[] = [];
      const created = await Instance.create(policy, { client: emu.client(), log: (line) => lines.push(line) });
      expect(created.outs.lifetimeInEffect).toBeNull();
      expect(lines).toContain(`its lifetime policy (maxLifetime 90s, then destroy) is not in effect: the emulator at ${emu.url} runs no onstart (the emulator was started without its machines (--no-ssh))`);
    } finally {
      await emu.close();
    }
  });

  it("claims nothing where the service cannot say (no control API)", async () => {
    const emu = await emulator({ controlApi: false });
    try {
      expect(await Instance.warnings(policy, { client: emu.client() })).toEqual([]);
    } finally {
      await emu.close();
    }
  });
});
