import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { BadRequestError, InsufficientCreditError } from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";

/**
 * The SDK's methods for the account's own operations and what the market shows (the public client has no GPU
 * metrics nor notification commands: these tests are theirs), against a real emulator over HTTP, each result
 * checked against the emulator's state.
 */
describe("the SDK: account, notifications, benchmarks and GPU metrics", () => {
  let emu: TestEmulator;
  const client = () => emu.client();
  beforeEach(async () => {
    emu = await emulator();
  });
  afterEach(async () => {
    await emu?.close();
  });

  /** Rents the offer (an instance of runtype args: no machine needed), answering its id. */
  const rent = async (offerId: number) => (await emu.client().instances.create(offerId, { image: "ubuntu", runtype: "args" } as never)).new_contract;

  it("GPU metrics: the counts are the market's; renting a model's cheapest offers raises its price now, and the history shows both times", async () => {
    const rows = await client().gpuMetrics.current({ verified: "all" });
    const offers = [...emu.marketplace.market.allOffers()];
    expect(rows.reduce((sum, r) => sum + r.total, 0)).toBe(offers.length);
    const model = rows.filter((r) => r.available >= 6).sort((a, b) => b.available - a.available)[0];
    const before = await client().gpuMetrics.prices(model.gpu_name, { verified: "all" });
    expect(before.current).toMatchObject({ available: model.available, total: model.total });
    const t0 = emu.marketplace.clock.nowSeconds();
    emu.marketplace.clock.advance(3_600_000);
    const cheapest = offers.filter((o) => o.gpu_name === model.gpu_name).sort((a, b) => a.dph_base! / a.num_gpus - b.dph_base! / b.num_gpus).slice(0, 3);
    for (const offer of cheapest) await rent(offer.id);
    const after = await client().gpuMetrics.prices(model.gpu_name, { verified: "all", start: t0, end: t0 + 7200, step: 3600 });
    expect(after.current!.available).toBe(model.available - 3);
    expect(after.current!.median!).toBeGreaterThan(before.current!.median!);
    expect(after.history.map((p) => p.time)).toEqual([t0, t0 + 3600, t0 + 7200]);
    expect(after.history[0]).toMatchObject({ availableMedian: before.current!.median, rentedMedian: null });
    expect(after.history[2]).toMatchObject({ availableMedian: after.current!.median, rentedMedian: expect.any(Number) });
    expect((await client().gpuMetrics.locations()).length).toBe(offers.length);
  });

  it("notifications: a webhook subscribed turns its channel on; a preference turning it off stops the deliveries; an unknown event is refused", async () => {
    const received: string[] = [];
    const receiver = http.createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk)).on("end", () => {
        received.push(JSON.parse(body).notif_type);
        response.end("ok");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    try {
      const c = client();
      expect((await c.notifications.types()).map((t) => t.key)).toContain("client:instance_deleted");
      expect((await c.notifications.preferences()).client.instance_deleted).toEqual({ email: true, webhooks: false });
      await c.webhooks.create({ webhook_url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, event_types: ["client:instance_deleted"] });
      expect((await c.notifications.preferences()).client.instance_deleted.webhooks).toBe(true);
      const offers = [...emu.marketplace.market.onMarket()];
      await c.instances.destroy(await rent(offers[0].id));
      await emu.webhooks.settled();
      expect(received).toEqual(["instance_deleted"]);
      const set = await c.notifications.setPreferences({ client: { instance_deleted: { email: true, webhooks: false } } });
      expect(set.client.instance_deleted.webhooks).toBe(false);
      await c.instances.destroy(await rent(offers[1].id));
      await emu.webhooks.settled();
      expect(received).toEqual(["instance_deleted"]);
      await expect(c.notifications.setPreferences({ client: { no_such_event: { email: true, webhooks: true } } })).rejects.toBeInstanceOf(BadRequestError);
      expect((await c.notifications.preferences()).client.instance_deleted.webhooks).toBe(false);
    } finally {
      receiver.close();
    }
  });

  it("account: credit transferred, details set, addresses and important actions listed; a prepayment above the credit is an InsufficientCreditError", async () => {
    const c = client();
    const friend = emu.account("friend@example.test");
    const before = emu.marketplace.seededUser.credit;
    await c.account.transferCredit("friend@example.test", 25);
    expect(emu.marketplace.seededUser.credit).toBe(before - 25);
    expect(emu.marketplace.accounts.user(friend.id)!.credit).toBeGreaterThanOrEqual(25);
    await expect(c.account.transferCredit(friend.id, 1e9)).rejects.toBeInstanceOf(InsufficientCreditError);
    await c.account.update({ fullname: "Grace Hopper" });
    expect((await c.users.current()).fullname).toBe("Grace Hopper");
    await expect(c.account.update({ shoe_size: "42" })).rejects.toMatchObject({ status: 400, code: "nonexistent_key" });
    expect((await c.account.ipAddresses()).map((row) => row.ip_address)).toEqual(["127.0.0.1"]);
    const id = await rent([...emu.marketplace.market.onMarket()][0].id);
    await expect(c.instances.prepay(id, 1e9)).rejects.toBeInstanceOf(InsufficientCreditError);
    expect(await c.instances.prepay(id, 10)).toMatchObject({ success: true, discount_rate: expect.any(Number) });
    expect(await c.instances.deposit(id)).toMatchObject({ refundable_deposit: 10 });
    // Destroyed, the instance gives back what is left of its deposit.
    const credit = emu.marketplace.seededUser.credit;
    await c.instances.destroy(id);
    expect(emu.marketplace.seededUser.credit).toBeCloseTo(credit + 10, 2);
    const routes = (await c.account.auditLogs()).map((row) => row.api_route);
    expect(routes.slice(0, 4)).toEqual(["DELETE /api/v0/instances/{id}/", "PUT /api/v0/instances/prepay/{id}/", "PUT /api/v0/asks/{offer_id}/", "PUT /api/v0/users/"]);
    expect(routes).toContain("PUT /api/v0/commands/transfer_credit/");
  });

  it("benchmarks: every page of a search, one row per machine of the market", async () => {
    const all = await client().benchmarks.search();
    expect(all.length).toBe(emu.marketplace.market.size);
    const h100 = await client().benchmarks.search({ gpu_name: { eq: "H100 SXM" } });
    expect(h100.every((row) => row.gpu_name === "H100 SXM")).toBe(true);
    expect(h100.length).toBe([...emu.marketplace.market.allOffers()].filter((o) => o.gpu_name === "H100 SXM").length);
  });
});
