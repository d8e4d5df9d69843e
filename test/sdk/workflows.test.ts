import {
  InstanceFailedError,
  NoMatchingOfferError,
  RentAttempt,
  RentFailedError,
  rentInstance,
  tokenOfInstance,
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
  emu.faults.clear();
});

const rtx4090 = { filters: { gpu_name: { eq: "RTX 4090" } } };
const outcomes = (attempts: RentAttempt[]) => attempts.map((a) => a.outcome);
const instancesNow = () => emu.marketplace.instances.all().length;

describe("rentInstance", () => {
  it("rents the cheapest matching offer, with a creation token in the instance's environment", async () => {
    const client = emu.client();
    const [cheapest] = await client.offers.search({ ...rtx4090, order: [["dph_total", "asc"]], limit: 1 });
    const rented = await rentInstance(client, rtx4090, { image: "x", env: { MINE: "1" } });
    expect(rented.offer.id).toBe(cheapest.id);
    expect(rented.attempts).toEqual([{ offerId: cheapest.id, outcome: "rented", atMs: expect.any(Number) }]);
    expect(rented.instanceApiKey).toEqual(expect.any(String));
    const instance = await client.instances.get(rented.instanceId);
    expect(tokenOfInstance(instance!)).toBe(rented.token);
    expect(rented.token).toMatch(/^gr-[a-z2-7]{10}$/);
    expect(instance!.extra_env).toEqual(expect.arrayContaining([["MINE", "1"]]));
    await client.instances.destroy(rented.instanceId);
  });

  it("moves on when offers vanish between search and acceptance, and reports every attempt", async () => {
    emu.marketplace.contention = 0.5;
    const before = emu.marketplace.stats.offersLostToContention;
    const client = emu.client();
    const attempts: RentAttempt[] = [];
    for (let i = 0; i < 8; i++) {
      const seen: RentAttempt[] = [];
      const rented = await rentInstance(client, {}, { image: "x" }, { onAttempt: (a) => seen.push(a) });
      expect(seen).toEqual(rented.attempts);
      expect(rented.attempts.at(-1)).toMatchObject({ offerId: rented.offer.id, outcome: "rented" });
      attempts.push(...rented.attempts);
      await client.instances.destroy(rented.instanceId);
    }
    const lost = emu.marketplace.stats.offersLostToContention - before;
    expect(lost).toBeGreaterThan(0);
    expect(attempts.filter((a) => a.outcome === "vanished")).toHaveLength(lost);
  });

  it("gives up at its deadline when every offer vanishes, naming the busy market as the cause", async () => {
    const busy = await emulator({ seed: 12, contention: 1 });
    try {
      const error = await rentInstance(busy.client(), { candidatesPerSearch: 3 }, { image: "x" }, { deadlineMs: 1_500 }).catch((e) => e);
      expect(error).toBeInstanceOf(RentFailedError);
      expect(error.attempts.length).toBeGreaterThan(3);
      expect(new Set(error.attempts.map((a: RentAttempt) => a.offerId)).size).toBe(error.attempts.length);
      expect(outcomes(error.attempts).every((o) => o === "vanished")).toBe(true);
      expect(error.message).toMatch(/taken by other tenants .* the market is busy/);
      expect(error.message).toMatch(/deadlineMs/);
      expect(busy.marketplace.instances.all()).toEqual([]);
    } finally {
      await busy.close();
    }
  });

  it("recovers the instance by its token when the creation was carried out but its answer was lost", async () => {
    const client = emu.client();
    const before = instancesNow();
    emu.faults.add({ path: "/api/v0/asks/", kind: "lost_response", times: 1 });
    const rented = await rentInstance(client, rtx4090, { image: "x", label: "lost-answer" });
    expect(outcomes(rented.attempts)).toEqual(["recovered"]);
    expect(rented.instanceApiKey).toBeUndefined();
    expect(instancesNow()).toBe(before + 1);
    const instance = await client.instances.get(rented.instanceId);
    expect(instance!.label).toBe("lost-answer");
    expect(tokenOfInstance(instance!)).toBe(rented.token);
    await client.instances.destroy(rented.instanceId);
  });

  it("with requireInstanceKey, gives a recovered keyless instance back and rents again, to hold the key", async () => {
    const client = emu.client();
    const before = instancesNow();
    emu.faults.add({ path: "/api/v0/asks/", kind: "lost_response", times: 1 });
    const rented = await rentInstance(client, rtx4090, { image: "x" }, { requireInstanceKey: true });
    expect(outcomes(rented.attempts)).toEqual(["keyless", "rented"]);
    expect(rented.instanceApiKey).toEqual(expect.any(String));
    expect(instancesNow()).toBe(before + 1);
    await client.instances.destroy(rented.instanceId);
  });

  it("finds an instance made from a template whose creation answer was lost", async () => {
    const client = emu.client();
    const [template] = (await client.call({ method: "GET", path: "/api/v0/template/", schema: TemplateSearchResponse })).templates;
    const before = instancesNow();
    emu.faults.add({ path: "/api/v0/asks/", kind: "lost_response", times: 1 });
    const rented = await rentInstance(client, rtx4090, { template_hash_id: template.hash_id });
    expect(outcomes(rented.attempts)).toEqual(["recovered"]);
    expect(instancesNow()).toBe(before + 1);
    await client.instances.destroy(rented.instanceId);
  });

  it("waits for a creation that completes after the client gave up, and rents nothing else", async () => {
    const client = emu.client({ timeoutMs: 300 });
    const before = instancesNow();
    emu.faults.add({ method: "PUT", path: "/api/v0/asks/", kind: "latency", delayMs: 1_500, times: 1 });
    const rented = await rentInstance(client, rtx4090, { image: "x" }, { lateCreationWindowMs: 5_000 });
    expect(outcomes(rented.attempts)).toEqual(["recovered"]);
    expect(instancesNow()).toBe(before + 1);
    expect(tokenOfInstance((await client.instances.get(rented.instanceId))!)).toBe(rented.token);
    await client.instances.destroy(rented.instanceId);
  });

  it("tries the same offer again after a 5xx that made nothing, while it is still free", async () => {
    const client = emu.client();
    const before = instancesNow();
    emu.faults.add({ path: "/api/v0/asks/", kind: "status", status: 503, times: 1 });
    const rented = await rentInstance(client, rtx4090, { image: "x" });
    expect(outcomes(rented.attempts)).toEqual(["not_created", "rented"]);
    expect(rented.attempts[0].offerId).toBe(rented.offer.id);
    expect(rented.attempts[0].detail).toMatch(/503/);
    expect(instancesNow()).toBe(before + 1);
    await client.instances.destroy(rented.instanceId);
  });

  it("rents a pinned offer through a transient 5xx, or fails clearly when it is gone", async () => {
    const client = emu.client();
    const [offer] = await client.offers.search({ order: [["score", "desc"]], limit: 1 });
    emu.faults.add({ path: "/api/v0/asks/", kind: "status", status: 502, times: 2 });
    const rented = await rentInstance(client, { offerId: offer.id }, { image: "x" });
    expect(rented.offer.id).toBe(offer.id);
    expect(outcomes(rented.attempts)).toEqual(["not_created", "not_created", "rented"]);
    await expect(rentInstance(client, { offerId: offer.id }, { image: "x" })).rejects.toThrow(NoMatchingOfferError);
    await client.instances.destroy(rented.instanceId);
  });

  it("blames an unavailable service, not the criteria, when creations keep failing", async () => {
    const client = emu.client();
    emu.faults.add({ path: "/api/v0/asks/", kind: "status", status: 503, times: 1_000 });
    const error = await rentInstance(client, rtx4090, { image: "x" }, { deadlineMs: 1_500 }).catch((e) => e);
    expect(error).toBeInstanceOf(RentFailedError);
    expect(error.message).toMatch(/the service kept failing .*503.* Try again later/);
    expect(error.message).not.toMatch(/widen/);
    expect(new Set(error.attempts.map((a: RentAttempt) => a.offerId)).size).toBe(1);
  });

  it("bids when renting an interruptible offer, at the price limit, and refuses reserved", async () => {
    const client = emu.client();
    const rented = await rentInstance(client, { type: "bid", maxPricePerHour: 0.9 }, { image: "x" });
    const instance = await client.instances.get(rented.instanceId);
    expect(instance).toMatchObject({ is_bid: true });
    expect(emu.marketplace.instances.all().find((i) => i.id === rented.instanceId)).toMatchObject({ isBid: true, pricePerHour: 0.9 });
    await client.instances.destroy(rented.instanceId);
    await expect(rentInstance(client, { type: "reserved" }, { image: "x" })).rejects.toThrow(/reserved/);
  });

  it("says so when nothing matches, without trying anything", async () => {
    const error = await rentInstance(emu.client(), { filters: { gpu_name: { eq: "Voodoo 2" } } }, { image: "x" }).catch((e) => e);
    expect(error).toBeInstanceOf(NoMatchingOfferError);
    expect(error.message).toMatch(/Voodoo 2/);
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
    await client.instances.destroy(instanceId);
  });

  it("sees an instance that is already running on its first poll, at once", async () => {
    const client = emu.client();
    const clock = { now: () => emu.marketplace.clock.now(), sleep: async (ms: number) => emu.marketplace.clock.advance(ms) };
    const { instanceId } = await rentInstance(client, {}, { image: "x" });
    emu.marketplace.clock.advance(600_000);
    const started = clock.now();
    let polls = 0;
    await waitForStatus(client, instanceId, "running", { clock, onPoll: () => polls++ });
    expect([polls, clock.now() - started]).toEqual([1, 0]);
    await client.instances.destroy(instanceId);
  });

  it("sees the instance running at most 2 s after it is, at 0.5 requests/s after the first poll, for boots of 3 s to 5 minutes", async () => {
    const client = emu.client();
    const clock = { now: () => emu.marketplace.clock.now(), sleep: async (ms: number) => emu.marketplace.clock.advance(ms) };
    for (const bootMs of [3_000, 20_000, 120_000, 300_000]) {
      emu.marketplace.lifecycle = { provisioningMs: bootMs / 4, loadingMs: (bootMs * 3) / 4 };
      const { instanceId } = await rentInstance(client, {}, { image: "x" });
      const started = clock.now();
      let polls = 0;
      await waitForStatus(client, instanceId, "running", { clock, onPoll: () => polls++ });
      const late = clock.now() - (started + bootMs);
      expect(late).toBeGreaterThanOrEqual(0);
      expect(late).toBeLessThanOrEqual(2_000);
      expect((polls - 1) / ((clock.now() - started) / 1000)).toBeLessThanOrEqual(0.5);
      await client.instances.destroy(instanceId);
    }
    emu.marketplace.lifecycle = { provisioningMs: 30_000, loadingMs: 120_000 };
  });

  it("fails fast when the instance exits, goes offline or loses its heartbeat", async () => {
    const client = emu.client();
    for (const status of ["exited", "unknown", "offline"] as const) {
      const { instanceId } = await rentInstance(client, {}, { image: "x" });
      emu.marketplace.instances.fail(instanceId, status, "injected");
      const error = await waitForStatus(client, instanceId, "running", { pollMs: 1, onPoll: advanceOnPoll(1000) }).catch((e) => e);
      expect(error).toBeInstanceOf(InstanceFailedError);
      expect(error.message).toContain(status);
      await client.instances.destroy(instanceId);
    }
  });

  it("times out when the instance never gets there", async () => {
    const client = emu.client();
    const { instanceId } = await rentInstance(client, {}, { image: "x" });
    await expect(waitForStatus(client, instanceId, "running", { pollMs: 5, timeoutMs: 40 })).rejects.toThrow(WaitTimeoutError);
    await client.instances.destroy(instanceId);
  });
});
