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
import { scratch } from "../ssh/machines";

const Instance = direct(INSTANCE);
const Fleet = direct(GPU_FLEET);

const run = promisify(execFile);
const DIST = path.resolve(__dirname, "..", "..", "dist", "sdk", "index.js");
const HOUR = 3_600_000;

/**
 * Instances that end themselves (sdk/workflows/watchdog.ts): a watchdog started from onstart ends them with their
 * own key. Its time is the machine's wall clock, so these tests use lifetimes of seconds on an emulator whose
 * clock runs (billing follows real time) and waits for the real processes, bounded.
 */
describe("watchdog: maxLifetime and idleTimeout", () => {
  let emu: TestEmulator;
  let work: ReturnType<typeof scratch>;

  beforeAll(async () => {
    work = scratch("watchdog");
    emu = await emulator({
      clock: new Clock("running"),
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

  it("maxLifetime: destroys itself after the renting process is gone; compute billed to within 5 s; the user's onstart ran as written", async () => {
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
    expect(fs.readFileSync(path.join(machine.sandbox, ".gpu-rental-watchdog.log"), "utf8")).toContain(`watchdog of instance ${destroyed.id}: maxLifetime 4s, then destroy`);

    await until(async () => (await view(destroyed.id)) === undefined || record(destroyed.id) === undefined, 60_000, "destroyed by its watchdog");
    const row = await charge(destroyed.id);
    // Charged from creation to the end: boot (until the renter saw it running) plus the 4 s lifetime, ±5 s.
    const chargedS = row.end - row.start;
    const bootS = destroyed.at / 1000 - row.start;
    expect(chargedS).toBeGreaterThanOrEqual(4);
    expect(Math.abs(chargedS - bootS - 4)).toBeLessThanOrEqual(5);
    expect(row.amount).toBeCloseTo((chargedS / 3600) * (pricePerHour + storagePerHour), 6);
    console.log(`maxLifetime 4s: charged ${chargedS.toFixed(2)} s (boot ${bootS.toFixed(2)} s), $${row.amount}`);
    emu.marketplace.clock.advance(HOUR);
    expect((await charge(destroyed.id)).amount).toBe(row.amount);

    await until(async () => (await view(stopped.id))?.actual_status === "exited", 60_000, "stopped by its watchdog");
    const stoppedView = await view(stopped.id);
    expect(stoppedView.cur_state).toBe("stopped");
    const stoppedStorage = storageOf(stopped.id);
    const before = (await charge(stopped.id)).amount;
    emu.marketplace.clock.advance(HOUR);
    const after = (await charge(stopped.id)).amount;
    // Stopped: disk only from then on (the real seconds the calls take are charged at disk rate too).
    expect(after - before).toBeGreaterThanOrEqual(stoppedStorage * 0.999);
    expect(after - before).toBeLessThan(stoppedStorage * 1.01);
    expect(Math.round((after - before) * 100)).toBe(Math.round(stoppedStorage * 100));
  }, 180_000);

  it("idleTimeout: at 0 % the instance ends within timeout + one check interval; at 90 % it runs through three timeouts", async () => {
    const client = emu.client();
    const rent = async (threshold: number) => {
      const rented = await rentInstance(client, {}, { image: "ubuntu:22.04", runtype: "ssh_direct" }, { lifetime: { idleTimeout: "4s", idleThreshold: threshold, idleAction: "destroy" } });
      await waitForStatus(client, rented.instanceId, "running");
      return rented.instanceId;
    };
    const [idle, busy] = await Promise.all([rent(10), rent(50)]);
    const setAt = Date.now();
    const setAtEmulator = emu.marketplace.clock.now();
    await Promise.all([
      http(emu.url, "PUT", `/_emulator/instances/${idle}/gpus`, { body: { utilization: 0 } }),
      http(emu.url, "PUT", `/_emulator/instances/${busy}/gpus`, { body: { utilization: 90 } }),
    ]);
    await until(async () => record(idle) === undefined, 60_000, "idle instance ended");
    const endedS = (await charge(idle)).end - setAtEmulator / 1000;
    // 4 s of idleness, plus one check interval (1 s), plus the call itself on a loaded machine (≤ 2 s).
    console.log(`idleTimeout 4s: ended ${endedS.toFixed(2)} s after utilisation went to 0 %`);
    expect(endedS).toBeLessThanOrEqual(4 + 1 + 2);
    // Idleness counts from the last busy reading, up to one interval before the change.
    expect(endedS).toBeGreaterThanOrEqual(4 - 1);
    // Three timeouts (12 s, real: the watchdog's clock) at 90 %: still running.
    const waited = Date.now() - setAt;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 12_500 - waited)));
    expect((await view(busy)).actual_status).toBe("running");
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
    await until(async () => record(Number(created.id)) === undefined, 60_000, "ended by its watchdog");
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
          "no watchdog will end the instance, and lifetimeInEffect will be empty. Start the emulator with its machines (without --no-ssh, on Linux or macOS), or end the instance yourself (pulumi destroy).",
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
