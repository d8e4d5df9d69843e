import * as net from "node:net";
import { GpuRentalClient, rentFleet, rentInstance, spendReport, SpendCapError, sweep } from "../../sdk";
import { configureLifecycle, direct, GPU_FLEET, INSTANCE, ResourceFunctions, UNKNOWN } from "../../provider/lifecycle";
import { emulator, http, TestEmulator } from "../helpers/emulator";

const GpuFleet = direct(GPU_FLEET);
const Instance = direct(INSTANCE);

const HOUR = 3_600_000;
const REQUEST = { image: "ubuntu:22.04", runtype: "args" as const };

/** maxHourlySpend, the bid cap and the spend report (sdk/workflows/spend.ts), against the emulator's billing. */
describe("spend guard: caps and the spend report", () => {
  let emu: TestEmulator;
  let client: GpuRentalClient;
  beforeEach(async () => {
    // Instances run as soon as they are created: the clock moves only when a test says.
    emu = await emulator({ lifecycle: { provisioningMs: 0, loadingMs: 0 } });
    client = emu.client();
  });
  afterEach(async () => emu?.close());

  const count = async () => (await client.instances.list()).length;
  const cheapest = async (n = 1) => (await client.offers.search({ order: [["dph_total", "asc"]], limit: n })).map((o) => o.dph_total);

  it("maxHourlySpend refuses the rental that would cross it, naming what counts; nothing rented; under the cap it rents", async () => {
    const first = await rentInstance(client, {}, { ...REQUEST, label: "train" });
    emu.marketplace.clock.advance(HOUR);
    const firstView = (await client.instances.get(first.instanceId))!;
    const [next] = await cheapest();
    const cap = Number((firstView.dph_total! + next / 2).toFixed(4));
    const refused = await rentInstance(client, {}, REQUEST, { maxHourlySpend: cap }).catch((e) => e);
    expect(refused).toBeInstanceOf(SpendCapError);
    expect(refused.message).toContain(`${first.instanceId} "train" running $${firstView.dph_total}/h`);
    expect(refused.message).toContain(`over maxHourlySpend $${cap}/h`);
    expect(refused.counted).toEqual([{ id: first.instanceId, label: "train", pricePerHour: firstView.dph_total }]);
    expect(await count()).toBe(1);
    // A stopped instance counts its disk only, which leaves room.
    await client.instances.stop(first.instanceId);
    const rented = await rentInstance(client, {}, REQUEST, { maxHourlySpend: cap });
    expect((await client.instances.get(rented.instanceId))!.dph_total! + (firstView.dph_total! - (firstView.dph_base as number))).toBeLessThanOrEqual(cap);
    expect(await count()).toBe(2);
  });

  it("a fleet that would cross the cap rents none; one that fits rents whole", async () => {
    const [a, b] = await cheapest(2);
    const refused = await rentFleet(client, 3, {}, REQUEST, { maxHourlySpend: a + b + 0.0001 }).catch((e) => e);
    expect(refused).toBeInstanceOf(SpendCapError);
    expect(refused.message).toContain("Renting 3 instances");
    expect(await count()).toBe(0);
    const [x, y, z] = await cheapest(3);
    const fleet = await rentFleet(client, 3, {}, REQUEST, { maxHourlySpend: 3 * z + 0.001 });
    expect(fleet.rented).toHaveLength(3);
    expect(x + y + z).toBeLessThanOrEqual(3 * z + 0.001);
  });

  it("an interruptible rental bids its cap at most and is charged no more; a bid above the cap is refused", async () => {
    const [offer] = await client.offers.search({ type: "bid", order: [["dph_total", "asc"]], limit: 1 });
    const cap = Number((offer.dph_total * 1.5).toFixed(4));
    await expect(rentInstance(client, { type: "bid", maxPricePerHour: cap }, { ...REQUEST, price: cap * 2 })).rejects.toThrow(/never pays more than its cap/);
    const rented = await rentInstance(client, { type: "bid", maxPricePerHour: cap }, REQUEST);
    const view = (await client.instances.get(rented.instanceId))!;
    expect(view.dph_base).toBeLessThanOrEqual(cap);
    emu.marketplace.clock.advance(HOUR);
    const report = await spendReport(client);
    const storage = view.dph_total! - (view.dph_base as number);
    expect(report.instances[0].accrued).toBeLessThanOrEqual(cap + storage + 1e-6);
  });

  it("the stack's gpu-rental:maxHourlySpend holds for the Instance resource", async () => {
    const [a] = await cheapest();
    let cap = a / 2;
    const config = { get: (key: string) => (key === "gpu-rental:maxHourlySpend" ? String(cap) : undefined) };
    await expect(Instance.create({ image: "ubuntu:22.04", runtype: "args" }, { client, config })).rejects.toThrow(SpendCapError);
    expect(await count()).toBe(0);
    // Under the cap, it deploys.
    cap = a * 1.5;
    const created = await Instance.create({ image: "ubuntu:22.04", runtype: "args" }, { client, config, wait: { pollMs: 50 } });
    expect((await client.instances.list()).map((i) => i.id)).toEqual([Number(created.id)]);
    cap = -1;
    await expect(Instance.create({ image: "ubuntu:22.04", runtype: "args" }, { client, config })).rejects.toThrow(/maxHourlySpend is "-1"/);
  });

  it("the stack's gpu-rental:maxHourlySpend holds for a GpuFleet whole: over it none is rented, under it all", async () => {
    const [a, b, c] = await cheapest(3);
    let cap = a + b + c * 0.5;
    const config = { get: (key: string) => (key === "gpu-rental:maxHourlySpend" ? String(cap) : undefined) };
    const fleet = { image: "ubuntu:22.04", runtype: "args", size: 3, labelPrefix: "capped" };
    await expect(GpuFleet.create(fleet, { client, config })).rejects.toThrow(/maxHourlySpend/);
    expect(await count()).toBe(0);
    cap = (a + b + c) * 2;
    const created = await GpuFleet.create(fleet, { client, config, wait: { pollMs: 50 } });
    expect(created.outs.instanceIds).toHaveLength(3);
    expect(await count()).toBe(3);
  });

  it("spend: running, stopped and self-ended instances, figures to the cent of the billing views; filters; sweep --older-than", async () => {
    const running = await rentInstance(client, {}, { ...REQUEST, label: "keep" }, { tokenPrefix: "ci" });
    const stopped = await rentInstance(client, {}, { ...REQUEST, label: "old" }, { tokenPrefix: "ci" });
    const ended = await rentInstance(client, {}, REQUEST);
    emu.marketplace.clock.advance(7 * HOUR);
    await client.instances.stop(stopped.instanceId);
    // Ended by itself: its own key, as its watchdog does.
    expect((await http(emu.url, "DELETE", `/api/v0/instances/${ended.instanceId}/`, { key: ended.instanceApiKey })).status).toBe(200);
    const young = await rentInstance(client, {}, REQUEST, { tokenPrefix: "ci" });
    emu.marketplace.clock.advance(HOUR);

    const report = await spendReport(client);
    const charges = (await http(emu.url, "GET", "/api/v0/charges/?limit=100", { key: emu.apiKey })).body.results as any[];
    const cents = (n: number) => Math.round(n * 100);
    for (const line of report.instances) {
      expect(cents(line.accrued)).toBe(cents(charges.find((row) => row.metadata.instance_id === line.id).amount));
    }
    const byId = new Map(report.instances.map((line) => [line.id, line]));
    expect(byId.get(running.instanceId)).toMatchObject({ state: "running", label: "keep", token: running.token, ageSeconds: 8 * 3600 });
    expect(byId.get(stopped.instanceId)!.state).toBe("stopped");
    expect(byId.get(ended.instanceId)).toMatchObject({ state: "ended", pricePerHour: 0, endedAt: charges.find((r) => r.metadata.instance_id === ended.instanceId).end });
    const views = await client.instances.list();
    const perHour = views.reduce((sum, v) => sum + (v.cur_state === "running" ? v.dph_total! : v.dph_total! - (v.dph_base as number)), 0);
    expect(cents(report.totalPerHour)).toBe(cents(perHour));

    expect((await spendReport(client, { olderThan: "6h" })).instances.map((l) => l.id)).toEqual([running.instanceId, stopped.instanceId, ended.instanceId].sort((a, b) => a - b));
    expect((await spendReport(client, { label: "old" })).instances.map((l) => l.id)).toEqual([stopped.instanceId]);
    expect((await spendReport(client, { tokenPrefix: "ci", olderThan: "2h" })).instances.map((l) => l.id)).toEqual([running.instanceId, stopped.instanceId]);

    const dry = await sweep(client, { tokenPrefix: "ci", olderThan: "6h", dryRun: true });
    expect(dry.instances.map((i) => i.id).sort()).toEqual([running.instanceId, stopped.instanceId].sort());
    expect(await count()).toBe(3);
    const idle = await sweep(client, { tokenPrefix: "ci", idle: "30m", dryRun: true });
    expect(idle.instances.map((i) => i.id)).toEqual([stopped.instanceId]);
    const swept = await sweep(client, { tokenPrefix: "ci", olderThan: "6h" });
    expect(swept.instances).toEqual(dry.instances);
    expect((await client.instances.list()).map((i) => i.id)).toEqual([young.instanceId]);
  });
});

/**
 * What `pulumi preview` warns of the stack's maxHourlySpend (the lifecycle's warnings of a kind, which both shells
 * send from `check`), against the emulator over HTTP: the refusal `up` will meet, in its words, or nothing when
 * that cannot be known.
 */
describe("spend guard: preview's warning of the stack's cap", () => {
  let emu: TestEmulator;
  let client: GpuRentalClient;
  let stack: Record<string, string>;
  beforeEach(async () => {
    emu = await emulator({ lifecycle: { provisioningMs: 0, loadingMs: 0 } });
    client = emu.client();
    stack = { "gpu-rental:apiUrl": emu.url, "gpu-rental:apiKey": emu.apiKey };
    // The provider of this stack, as Configure makes it: it reads the stack's settings when it needs them.
    const lifecycle = configureLifecycle({ get: (key) => stack[key] });
    Instance = lifecycle.resource("Instance");
    GpuFleet = lifecycle.resource("GpuFleet");
  });
  afterEach(async () => {
    await emu?.close();
  });

  let Instance: ResourceFunctions;
  let GpuFleet: ResourceFunctions;
  const SPEC = { image: "ubuntu:22.04", runtype: "args" };
  const cheapest = async (n = 1) => (await client.offers.search({ order: [["dph_total", "asc"]], limit: n })).map((o) => o.dph_total);
  /** The refusal of `up`, as preview words it. */
  const asWarning = (refusal: string) => refusal.replace("Nothing was rented.", "`pulumi up` will refuse it: nothing will be rented.");

  it("a new Instance the cap will refuse: up's refusal, naming what counts, the cap and the cheapest price; under the cap none", async () => {
    const other = await rentInstance(client, {}, { ...REQUEST, label: "other-stack" });
    const paying = (await client.instances.get(other.instanceId))!.dph_total!;
    const [next] = await cheapest();
    const cap = Number((paying + next / 2).toFixed(4));
    stack["gpu-rental:maxHourlySpend"] = String(cap);

    const warnings = (await Instance.lookAhead({}, SPEC, UNKNOWN)).warnings;
    const refused = await Instance.create(SPEC).catch((e) => e);
    expect(refused).toBeInstanceOf(SpendCapError);
    expect(warnings).toEqual([`gpu-rental Instance: ${asWarning(refused.message)}`]);
    expect(warnings[0]).toContain(`over maxHourlySpend $${cap}/h`);
    expect(warnings[0]).toContain(`${other.instanceId} "other-stack" running $${paying}/h`);
    expect(warnings[0]).toContain(`the cheapest matching offer is $${next}/h`);
    // The dynamic provider's warning has no URN: a label names the resource.
    expect((await Instance.lookAhead({}, { ...SPEC, label: "trainer" }, UNKNOWN)).warnings).toEqual([expect.stringMatching(/^gpu-rental Instance trainer: Renting this instance/)]);
    // An unknown input that does not decide the search changes nothing.
    expect((await Instance.lookAhead({}, { ...SPEC, env: UNKNOWN }, UNKNOWN)).warnings).toEqual(warnings);

    stack["gpu-rental:maxHourlySpend"] = String(paying + next * 2);
    expect((await Instance.lookAhead({}, SPEC, UNKNOWN)).warnings).toEqual([]);
    expect((await client.instances.list()).map((i) => i.id)).toEqual([other.instanceId]);
  });

  it("nothing when it cannot be known or rents nothing: a search input unknown, an existing resource, an adoption, a bad cap, no service", async () => {
    stack["gpu-rental:maxHourlySpend"] = "0.0001";
    expect((await Instance.lookAhead({}, SPEC, UNKNOWN)).warnings).toHaveLength(1);
    const unknowns = [{ gpuModel: UNKNOWN }, { filters: { gpu_ram: { gte: UNKNOWN } } }, { offerType: UNKNOWN }, { account: UNKNOWN }, { adoptId: UNKNOWN }];
    for (const unknown of unknowns) expect((await Instance.lookAhead({}, { ...SPEC, ...unknown }, UNKNOWN)).warnings).toEqual([]);
    // Its old inputs: the resource exists, and its diff decides what changes.
    expect((await Instance.lookAhead(SPEC, SPEC, UNKNOWN)).warnings).toEqual([]);
    expect((await Instance.lookAhead({}, { ...SPEC, adoptId: 4000001 }, UNKNOWN)).warnings).toEqual([]);
    // Inputs that fail their check: the preview fails on them anyway.
    expect((await Instance.lookAhead({}, { ...SPEC, disk: -5 }, UNKNOWN)).warnings).toEqual([]);
    // A cap that is not a number of $/hour, and a service that does not answer: create says why, not preview.
    stack["gpu-rental:maxHourlySpend"] = "lots";
    expect((await Instance.lookAhead({}, SPEC, UNKNOWN)).warnings).toEqual([]);
    stack["gpu-rental:maxHourlySpend"] = "0.0001";
    stack["gpu-rental:apiUrl"] = `http://127.0.0.1:${await closedPort()}`;
    const started = Date.now();
    expect((await Instance.lookAhead({}, SPEC, UNKNOWN)).warnings).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("a new GpuFleet the cap will refuse whole: up's refusal; none under the cap, for a size not known yet, or with every member adopted", async () => {
    const [a, b, c] = await cheapest(3);
    const fleet = { ...SPEC, size: 3, labelPrefix: "capped" };
    stack["gpu-rental:maxHourlySpend"] = String((a + b + c) * 2);
    expect((await GpuFleet.lookAhead({}, fleet, UNKNOWN)).warnings).toEqual([]);

    stack["gpu-rental:maxHourlySpend"] = String(a + b + c * 0.5);
    const warnings = (await GpuFleet.lookAhead({}, fleet, UNKNOWN)).warnings;
    expect(warnings).toEqual([expect.stringMatching(/^gpu-rental GpuFleet capped: Renting 3 instances would take the account over maxHourlySpend/)]);
    const refused = await GpuFleet.create(fleet).catch((e) => e);
    expect(asWarning(refused.message)).toContain(warnings[0].replace("gpu-rental GpuFleet capped: ", ""));
    expect((await GpuFleet.lookAhead({}, { ...fleet, size: UNKNOWN }, UNKNOWN)).warnings).toEqual([]);
    expect((await GpuFleet.lookAhead({}, { ...fleet, adoptIds: UNKNOWN }, UNKNOWN)).warnings).toEqual([]);
    const own = await rentInstance(client, {}, REQUEST);
    stack["gpu-rental:maxHourlySpend"] = "0.0001";
    expect((await GpuFleet.lookAhead({}, { ...fleet, size: 2, adoptIds: [own.instanceId] }, UNKNOWN)).warnings).toEqual([expect.stringContaining("Renting this instance")]);
    expect((await GpuFleet.lookAhead({}, { ...fleet, size: 1, adoptIds: [own.instanceId] }, UNKNOWN)).warnings).toEqual([]);
    expect((await GpuFleet.lookAhead({}, { ...fleet, size: 0 }, UNKNOWN)).warnings).toEqual([]);
  });
});

/** A local port nothing listens on (one just freed). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
