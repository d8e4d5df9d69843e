import { createApiKey, GpuRentalClient, listInvoices, UnauthorizedError } from "../../sdk";
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
  const [offer] = await client.searchOffers({ order: [["dph_total", "asc"]], limit: 1 });
  const { new_contract: id } = await client.createInstance(offer.id, { image: "x" });
  const { credit: before } = await client.currentUser();
  const price = (await client.getInstance(id))!.dph_total!;

  emu.marketplace.clock.advance(2 * HOUR);
  const { credit, invoices } = await listInvoices(client);
  const item = invoices.find((i) => i.instance_id === id)!;
  expect(item.amount).toBeCloseTo(2 * price, 4);
  expect(before - credit).toBeCloseTo(2 * price, 4);
  expect(item.end - item.start).toBeCloseTo(2 * 3600, 0);

  await client.destroyInstance(id);
  emu.marketplace.clock.advance(HOUR);
  const after = await listInvoices(client);
  expect(after.invoices.find((i) => i.instance_id === id)!.amount).toBeCloseTo(item.amount, 6);
  expect(after.credit).toBeCloseTo(credit, 6);
});

it("is out of reach of a key scoped to misc, user_read, instance_read and instance_write", async () => {
  const four = { api: { misc: {}, user_read: {}, instance_read: {}, instance_write: {} } };
  const { key } = await createApiKey(emu.client(), { name: "four", permissions: four });
  const scoped = new GpuRentalClient({ apiUrl: emu.url, apiKey: key });
  await expect(listInvoices(scoped)).rejects.toThrow(UnauthorizedError);
  await expect(listInvoices(scoped)).rejects.toMatchObject({ status: 403, code: "permission_denied" });
  expect((await scoped.currentUser()).id).toBe(emu.marketplace.seededUser.id);
  const { key: billingKey } = await createApiKey(emu.client(), { name: "billing", permissions: { api: { billing: {} } } });
  expect((await listInvoices(new GpuRentalClient({ apiUrl: emu.url, apiKey: billingKey }))).invoices).toBeInstanceOf(Array);
});
