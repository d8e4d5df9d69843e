import {
  InstanceFailedError,
  NoMatchingOfferError,
  RentAttempt,
  RentFailedError,
  rentInstance,
  waitForStatus,
  WaitTimeoutError,
} from "../../sdk";
import { TemplateSearchResponse } from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";

let emu: TestEmulator;

beforeAll(async () => {
  emu = await emulator({ seed: 11, lifecycle: { provisioningMs: 30_000, loadingMs: 120_000 } });
});
afterAll(() => emu.close());
beforeEach(() => {
  emu.marketplace.contention = 0;
});

const rtx4090 = { filters: { gpu_name: { eq: "RTX 4090" } } };

describe("rentInstance", () => {
  it("rents the cheapest matching offer", async () => {
    const client = emu.client();
    const [cheapest] = await client.searchOffers({ ...rtx4090, order: [["dph_total", "asc"]], limit: 1 });
    const rented = await rentInstance(client, rtx4090, { image: "x" });
    expect(rented.offer.id).toBe(cheapest.id);
    expect(rented.attempts).toEqual([{ offerId: cheapest.id, outcome: "rented" }]);
    await client.destroyInstance(rented.instanceId);
  });

  it("moves on when offers vanish between search and acceptance, and reports what it tried", async () => {
    emu.marketplace.contention = 0.5;
    const before = emu.marketplace.stats.offersLostToContention;
    const client = emu.client();
    const attempts: RentAttempt[] = [];
    for (let i = 0; i < 8; i++) {
      const seen: RentAttempt[] = [];
      const rented = await rentInstance(client, {}, { image: "x" }, { onAttempt: (a) => seen.push(a), maxAttempts: 30 });
      expect(seen).toEqual(rented.attempts);
      expect(rented.attempts.at(-1)).toEqual({ offerId: rented.offer.id, outcome: "rented" });
      attempts.push(...rented.attempts);
      await client.destroyInstance(rented.instanceId);
    }
    const lost = emu.marketplace.stats.offersLostToContention - before;
    expect(lost).toBeGreaterThan(0);
    expect(attempts.filter((a) => a.outcome === "vanished")).toHaveLength(lost);
  });

  it("searches again when every candidate of a search has vanished, and stops at the attempt bound", async () => {
    emu.marketplace.contention = 1;
    const error = await rentInstance(emu.client(), { candidatesPerSearch: 2 }, { image: "x" }, { maxAttempts: 5, maxSearches: 10 }).catch((e) => e);
    expect(error).toBeInstanceOf(RentFailedError);
    expect(error.attempts).toHaveLength(5);
    expect(new Set(error.attempts.map((a: RentAttempt) => a.offerId)).size).toBe(5);
    for (const attempt of error.attempts) expect(error.message).toContain(String(attempt.offerId));
  });

  it("finds the instance when the service carried out a creation but its answer was lost", async () => {
    const client = emu.client();
    const before = emu.marketplace.instances.all().length;
    emu.faults.add({ path: "/api/v0/asks/", kind: "lost_response", times: 1 });
    const rented = await rentInstance(client, rtx4090, { image: "x", label: "lost-answer" });
    expect(rented.attempts).toEqual([expect.objectContaining({ offerId: rented.offer.id, outcome: "recovered" })]);
    expect(emu.marketplace.instances.all()).toHaveLength(before + 1);
    expect((await client.getInstance(rented.instanceId))!.label).toBe("lost-answer");
    await client.destroyInstance(rented.instanceId);
  });

  it("finds an instance made from a template whose creation answer was lost", async () => {
    const client = emu.client();
    const [template] = (await client.call({ method: "GET", path: "/api/v0/template/", schema: TemplateSearchResponse })).templates;
    const before = emu.marketplace.instances.all().length;
    emu.faults.add({ path: "/api/v0/asks/", kind: "lost_response", times: 1 });
    const rented = await rentInstance(client, rtx4090, { template_hash_id: template.hash_id });
    expect(rented.attempts.map((a) => a.outcome)).toEqual(["recovered"]);
    expect(emu.marketplace.instances.all()).toHaveLength(before + 1);
    await client.destroyInstance(rented.instanceId);
  });

  it("bids when renting an interruptible offer, at the price limit, and refuses reserved", async () => {
    const client = emu.client();
    const rented = await rentInstance(client, { type: "bid", maxPricePerHour: 0.9 }, { image: "x" });
    const instance = await client.getInstance(rented.instanceId);
    expect(instance).toMatchObject({ is_bid: true });
    expect(emu.marketplace.instances.all().find((i) => i.id === rented.instanceId)).toMatchObject({ isBid: true, pricePerHour: 0.9 });
    await client.destroyInstance(rented.instanceId);
    await expect(rentInstance(client, { type: "reserved" }, { image: "x" })).rejects.toThrow(/reserved/);
  });

  it("moves on to the next offer when a creation failed without creating anything", async () => {
    const client = emu.client();
    const before = emu.marketplace.instances.all().length;
    emu.faults.add({ path: "/api/v0/asks/", kind: "status", status: 503, times: 1 });
    const rented = await rentInstance(client, rtx4090, { image: "x" });
    expect(rented.attempts.map((a) => a.outcome)).toEqual(["failed", "rented"]);
    expect(emu.marketplace.instances.all()).toHaveLength(before + 1);
    await client.destroyInstance(rented.instanceId);
  });

  it("says so when nothing matches, without trying anything", async () => {
    const error = await rentInstance(emu.client(), { filters: { gpu_name: { eq: "Voodoo 2" } } }, { image: "x" }).catch((e) => e);
    expect(error).toBeInstanceOf(NoMatchingOfferError);
    expect(error.message).toMatch(/Voodoo 2/);
  });

  it("rents a pinned offer, or fails clearly when it is gone", async () => {
    const client = emu.client();
    const [offer] = await client.searchOffers({ order: [["score", "desc"]], limit: 1 });
    const rented = await rentInstance(client, { offerId: offer.id }, { image: "x" });
    expect(rented.offer.id).toBe(offer.id);
    await expect(rentInstance(client, { offerId: offer.id }, { image: "x" })).rejects.toThrow(NoMatchingOfferError);
    await client.destroyInstance(rented.instanceId);
  });
});

describe("waitForStatus", () => {
  /** Moves the emulator's clock forward each time the SDK polls, so the lifecycle runs without sleeps. */
  const advanceOnPoll = (ms: number) => () => emu.marketplace.clock.advance(ms);

  it("follows null → loading → running on the emulator's clock", async () => {
    const client = emu.client();
    const { instanceId } = await rentInstance(client, {}, { image: "x" });
    const statuses: (string | null)[] = [];
    const instance = await waitForStatus(client, instanceId, "running", {
      pollMs: 1,
      onPoll: (i) => {
        statuses.push(i.actual_status);
        emu.marketplace.clock.advance(20_000);
      },
    });
    expect(instance.actual_status).toBe("running");
    expect(statuses[0]).toBeNull();
    expect(statuses).toContain("loading");
    expect(statuses.indexOf("loading")).toBeGreaterThan(statuses.lastIndexOf(null));
    await client.destroyInstance(instanceId);
  });

  it("fails fast when the instance exits, goes offline or loses its heartbeat", async () => {
    const client = emu.client();
    for (const status of ["exited", "unknown", "offline"] as const) {
      const { instanceId } = await rentInstance(client, {}, { image: "x" });
      emu.marketplace.instances.fail(instanceId, status, "injected");
      const error = await waitForStatus(client, instanceId, "running", { pollMs: 1, onPoll: advanceOnPoll(1000) }).catch((e) => e);
      expect(error).toBeInstanceOf(InstanceFailedError);
      expect(error.message).toContain(status);
      await client.destroyInstance(instanceId);
    }
  });

  it("times out when the instance never gets there", async () => {
    const client = emu.client();
    const { instanceId } = await rentInstance(client, {}, { image: "x" });
    await expect(waitForStatus(client, instanceId, "running", { pollMs: 5, timeoutMs: 40 })).rejects.toThrow(WaitTimeoutError);
    await client.destroyInstance(instanceId);
  });
});
