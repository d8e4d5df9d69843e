import { emulator, http, TestEmulator } from "../helpers/emulator";

const MINUTE = 60_000;

/**
 * The emulator outbids on its own (emulator/domain/outbids.ts): on its clock, a running interruptible instance is
 * outbid `perHour` times an hour on average; the winner's bid is the machine's minimum for a while.
 */
describe("emulator: outbids on its own clock", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator({ lifecycle: { provisioningMs: 0, loadingMs: 0 } });
  });
  afterAll(async () => emu?.close());

  const view = async (id: number) => (await http(emu.url, "GET", `/api/v0/instances/${id}/`, { key: emu.apiKey })).body.instances;

  it("outbids at the rate set, raises the machine's minimum above the bid, and lets a bid at the new minimum run again", async () => {
    const settings = await http(emu.url, "PUT", "/_emulator/settings", { body: { outbids: { perHour: 2, raise: 0.02, holdHours: 0.5 } } });
    expect(settings.body.outbids).toEqual({ perHour: 2, raise: 0.02, holdHours: 0.5 });
    expect((await http(emu.url, "PUT", "/_emulator/settings", { body: { outbids: { perHour: -1 } } })).status).toBe(400);
    const [offer] = (await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { type: "bid", limit: 1, order: [["dph_total", "asc"]] } })).body.offers;
    const bid = Number((offer.min_bid * 1.1).toFixed(4));
    const id = (await http(emu.url, "PUT", `/api/v0/asks/${offer.id}/`, { key: emu.apiKey, body: { image: "ubuntu:22.04", price: bid } })).body.new_contract;
    // 50 hours, a minute at a time: each outbid is answered with a bid at the new minimum, as a renter would.
    let outbids = 0;
    let raisedSeen = 0;
    for (let minute = 0; minute < 50 * 60; minute++) {
      emu.marketplace.clock.advance(MINUTE);
      if (emu.marketplace.instances.byId(id)!.intended === "running") continue;
      outbids++;
      const stopped = await view(id);
      expect(stopped.status_msg).toMatch(/outbid/i);
      // The winner bid above this instance's bid, by the raise set (unless its hold lapsed already).
      expect([offer.min_bid, Number((stopped.dph_base * 1.02).toFixed(4))]).toContain(stopped.min_bid);
      raisedSeen = Math.max(raisedSeen, stopped.min_bid);
      // Below the new minimum it stays stopped; at it, it runs again.
      await http(emu.url, "PUT", `/api/v0/instances/bid_price/${id}/`, { key: emu.apiKey, body: { client_id: "me", price: stopped.dph_base } });
      expect(emu.marketplace.instances.byId(id)!.intended).toBe("stopped");
      // (A winner's short hold may have lapsed already: then a bid just above the old one does.)
      const rebid = Math.max(stopped.min_bid, Number((stopped.dph_base + 0.0001).toFixed(4)));
      await http(emu.url, "PUT", `/api/v0/instances/bid_price/${id}/`, { key: emu.apiKey, body: { client_id: "me", price: rebid } });
      expect(emu.marketplace.instances.byId(id)!.intended).toBe("running");
    }
    // A Poisson count of mean 100: far outside 60..140 only by a broken rate.
    expect(outbids).toBeGreaterThan(60);
    expect(outbids).toBeLessThan(140);
    expect(raisedSeen).toBeGreaterThan(bid);
    const state = (await http(emu.url, "GET", "/_emulator/state")).body;
    expect(state.stats.outbids).toBe(outbids);
    await http(emu.url, "DELETE", `/api/v0/instances/${id}/`, { key: emu.apiKey, body: {} });
    // Once the winner's hold lapses, the market's minimum falls back to the offer's own.
    emu.marketplace.clock.advance(48 * 60 * MINUTE);
    const [again] = (await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { type: "bid", id: { eq: offer.id } } })).body.offers;
    expect(again.min_bid).toBe(offer.min_bid);
    await http(emu.url, "PUT", "/_emulator/settings", { body: { outbids: { perHour: 0 } } });
  });
});
