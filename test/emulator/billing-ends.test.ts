import { emulator, http, TestEmulator } from "../helpers/emulator";
import { HOURS_PER_MONTH } from "../../emulator/domain/catalogue";

/** What the billing views charge a stopped, a destroyed and a self-ended instance (its own key ended it). */
describe("billing of instances that stop and end", () => {
  let emu: TestEmulator;
  beforeAll(async () => (emu = await emulator()));
  afterAll(async () => emu?.close());

  const HOUR = 3_600_000;
  const charges = async () => (await http(emu.url, "GET", "/api/v0/charges/?limit=100", { key: emu.apiKey })).body.results as any[];
  const chargeOf = async (id: number) => (await charges()).find((row) => row.metadata.instance_id === id);
  const rent = async () => {
    const offers = (await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { limit: 1, order: [["dph_total", "asc"]] } })).body.offers;
    const res = await http(emu.url, "PUT", `/api/v0/asks/${offers[0].id}/`, { key: emu.apiKey, body: { image: "ubuntu:22.04", runtype: "args", disk: 50 } });
    return { id: res.body.new_contract as number, key: res.body.instance_api_key as string };
  };
  const rates = (id: number) => {
    const record = emu.marketplace.instances.all().find((i) => i.id === id)!;
    const storage = ((record.offer.storage_cost ?? 0) * 50) / HOURS_PER_MONTH;
    return { compute: record.pricePerHour, storage };
  };

  it("charges compute and disk while running, disk only once stopped, nothing once destroyed; the row ends when it did", async () => {
    const stopped = await rent();
    const destroyed = await rent();
    const { compute, storage } = rates(stopped.id);
    const destroyedRates = rates(destroyed.id);
    emu.marketplace.clock.advance(HOUR);
    // Both end themselves with their own key, as a watchdog on the instance does.
    expect((await http(emu.url, "PUT", `/api/v0/instances/${stopped.id}/`, { key: stopped.key, body: { state: "stopped" } })).status).toBe(200);
    expect((await http(emu.url, "DELETE", `/api/v0/instances/${destroyed.id}/`, { key: destroyed.key })).status).toBe(200);
    const endedAt = emu.marketplace.clock.now() / 1000;
    emu.marketplace.clock.advance(2 * HOUR);

    const stoppedRow = await chargeOf(stopped.id);
    expect(stoppedRow.amount).toBeCloseTo(compute + 3 * storage, 5);
    expect(stoppedRow.end).toBeCloseTo(emu.marketplace.clock.now() / 1000, 3);
    const destroyedRow = await chargeOf(destroyed.id);
    expect(destroyedRow.amount).toBeCloseTo(destroyedRates.compute + destroyedRates.storage, 5);
    expect(destroyedRow.end).toBeCloseTo(endedAt, 3);
    // The invoices view says the same.
    const invoices = (await http(emu.url, "GET", "/api/v0/users/me/invoices/", { key: emu.apiKey })).body.invoices as any[];
    expect(invoices.find((row) => row.instance_id === destroyed.id)).toMatchObject({ amount: destroyedRow.amount, end: destroyedRow.end });
    expect(storage).toBeGreaterThan(0);
  });
});
