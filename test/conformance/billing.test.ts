import { GpuRentalClient, UnauthorizedError } from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";

/** Billing: per-instance accrual on the emulator's clock, visible in credit and invoices; the `billing` category. */
let emu: TestEmulator;
beforeAll(async () => {
  emu = await emulator();
});
afterAll(() => emu.close());

const HOUR = 3_600_000;

it("charges each instance by the hour into the user's credit and invoices, also after it is destroyed", async () => {
  const client = emu.client();
  const [offer] = await client.offers.search({ order: [["dph_total", "asc"]], limit: 1 });
  const { new_contract: id } = await client.instances.create(offer.id, { image: "x" });
  const before = (await client.users.current()).credit!;
  const price = (await client.instances.get(id))!.dph_total!;

  emu.marketplace.clock.advance(2 * HOUR);
  const { credit, invoices } = await client.billing.invoices();
  const item = invoices.find((i) => i.instance_id === id)!;
  expect(item.amount).toBeCloseTo(2 * price, 4);
  expect(before - credit).toBeCloseTo(2 * price, 4);
  expect(item.end - item.start).toBeCloseTo(2 * 3600, 0);

  await client.instances.destroy(id);
  emu.marketplace.clock.advance(HOUR);
  const after = await client.billing.invoices();
  expect(after.invoices.find((i) => i.instance_id === id)!.amount).toBeCloseTo(item.amount, 6);
  expect(after.credit).toBeCloseTo(credit, 6);
});

it("is out of reach of a key scoped to misc, user_read, instance_read and instance_write", async () => {
  const four = { api: { misc: {}, user_read: {}, instance_read: {}, instance_write: {} } };
  const { key } = await emu.client().apiKeys.create({ name: "four", permissions: four });
  const scoped = new GpuRentalClient({ apiUrl: emu.url, apiKey: key });
  await expect(scoped.billing.invoices()).rejects.toThrow(UnauthorizedError);
  await expect(scoped.billing.invoices()).rejects.toMatchObject({ status: 403, code: "permission_denied" });
  expect((await scoped.users.current()).id).toBe(emu.marketplace.seededUser.id);
  const { key: billingKey } = await emu.client().apiKeys.create({ name: "billing", permissions: { api: { billing: {} } } });
  expect((await new GpuRentalClient({ apiUrl: emu.url, apiKey: billingKey }).billing.invoices()).invoices).toBeInstanceOf(Array);
});
