import { execFile } from "node:child_process";
import * as path from "node:path";
import { promisify } from "node:util";
import { rentInstance } from "../sdk";
import { emulator, http, TestEmulator } from "./helpers/emulator";
import { REPO_ROOT } from "./helpers/paths";

const HOUR = 3_600_000;

/** `gpu-rental spend` and `sweep --older-than/--idle` against the emulator's billing views. */
describe("gpu-rental spend and sweep by age", () => {
  let emu: TestEmulator;
  beforeAll(async () => (emu = await emulator()));
  afterAll(async () => emu?.close());

  const cli = async (...args: string[]) =>
    (await promisify(execFile)(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), ...args], {
      env: { ...process.env, GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: emu.apiKey },
      timeout: 60_000,
    })).stdout;

  it("lists running, stopped and self-ended instances to the cent of the billing views; sweep --older-than destroys what it listed", async () => {
    const client = emu.client();
    const running = await rentInstance(client, {}, { image: "x", label: "train" }, { tokenPrefix: "nightly" });
    const stopped = await rentInstance(client, {}, { image: "x" }, { tokenPrefix: "nightly" });
    const ended = await rentInstance(client, {}, { image: "x" });
    emu.marketplace.clock.advance(7 * HOUR);
    await client.instances.stop(stopped.instanceId);
    await http(emu.url, "DELETE", `/api/v0/instances/${ended.instanceId}/`, { key: ended.instanceApiKey });
    const young = await rentInstance(client, {}, { image: "x" }, { tokenPrefix: "nightly" });
    emu.marketplace.clock.advance(HOUR / 2);

    const report = JSON.parse(await cli("spend", "--json"));
    const charges = (await http(emu.url, "GET", "/api/v0/charges/?limit=100", { key: emu.apiKey })).body.results as any[];
    const cents = (n: number) => Math.round(n * 100);
    expect(report.instances.map((l: any) => [l.id, l.state])).toEqual([
      [running.instanceId, "running"], [stopped.instanceId, "stopped"], [ended.instanceId, "ended"], [young.instanceId, "running"],
    ].sort((a: any, b: any) => a[0] - b[0]));
    for (const line of report.instances) expect(cents(line.accrued)).toBe(cents(charges.find((row) => row.metadata.instance_id === line.id).amount));
    expect(cents(report.totalAccrued)).toBe(cents(charges.reduce((sum, row) => sum + row.amount, 0)));

    const table = await cli("spend", "--older-than", "6h", "--token-prefix", "nightly");
    expect(table).toMatch(new RegExp(`^${running.instanceId}\\s+train\\s+${running.token}\\s+gpu-rental\\s+running\\s+7h30m`, "m"));
    expect(table).toMatch(new RegExp(`^${stopped.instanceId}\\s+-\\s+${stopped.token}\\s+gpu-rental\\s+stopped\\s+7h30m`, "m"));
    expect(table).not.toContain(String(young.instanceId));
    expect(table).toMatch(/^TOTAL\s+2 live/m);

    const dry = await cli("sweep", "--token-prefix", "nightly", "--older-than", "6h", "--dry-run");
    const listed = [...dry.matchAll(/would destroy: instance (\d+)/g)].map((m) => Number(m[1])).sort();
    expect(listed).toEqual([running.instanceId, stopped.instanceId].sort());
    expect(emu.marketplace.instances.all()).toHaveLength(3);
    const idle = await cli("sweep", "--token-prefix", "nightly", "--idle", "20m", "--dry-run");
    expect([...idle.matchAll(/would destroy: instance (\d+)/g)].map((m) => Number(m[1]))).toEqual([stopped.instanceId]);
    const real = await cli("sweep", "--token-prefix", "nightly", "--older-than", "6h");
    expect([...real.matchAll(/destroyed: instance (\d+)/g)].map((m) => Number(m[1])).sort()).toEqual(listed);
    expect(emu.marketplace.instances.all().map((i) => i.id)).toEqual([young.instanceId]);
  });

  it("shows what an instance of a few seconds has cost, a fraction of a cent, not 0.00", async () => {
    const short = await rentInstance(emu.client(), {}, { image: "x", label: "short" });
    emu.marketplace.clock.advance(25_000);
    const report = JSON.parse(await cli("spend", "--label", "short", "--json"));
    const accrued = report.instances[0].accrued as number;
    expect(accrued).toBeGreaterThan(0);
    expect(accrued).toBeLessThan(0.01);
    const table = await cli("spend", "--label", "short");
    expect(table).toMatch(new RegExp(`^${short.instanceId}\\s+short\\s.*\\s${accrued.toFixed(4)}$`, "m"));
    expect(table).not.toMatch(/\s0\.00$/m);
  });
});
