import { GpuRentalClient, InterruptedError, Clock as SdkClock, LimitWait, RateLimitedError, rentFleet, rentInstance, RentResult, rentalWarnings } from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";

/**
 * Many rentals under the service's own rate limits (the emulator's defaults: instance creation one call per 3 s,
 * offer search ten a minute, per key), as a Pulumi program of many instances meets them. The time is the emulator's
 * frozen clock, moved by the one pause the calls take (a wait for the limit), so minutes pass without sleeping.
 */
let emu: TestEmulator;
beforeEach(async () => {
  emu = await emulator({ rateLimits: "service", offers: 400, seed: 5 });
});
afterEach(() => emu.close());

/** The emulator's clock, moved by whoever waits: the SDK's pauses pass at once. */
const emulatorTime = (): SdkClock => ({ now: () => emu.marketplace.clock.now(), sleep: async (ms) => emu.marketplace.clock.advance(ms) });
const criteria = { filters: { num_gpus: { gte: 1 } } };
const searches = () => emu.marketplace.stats.offerSearches ?? 0;
const refusedCreations = () => emu.marketplace.rateLimits.refused.instance_create ?? 0;

it("32 rentals at once: all rented, one at a time as the limit allows and in the order asked, from one search, no 429 an error", async () => {
  const clock = emulatorTime();
  // A call's own deadline is far shorter than the queue's wait: the wait counts against the rental's deadline only.
  const client = emu.client({ clock, callDeadlineMs: 5_000 });
  const waits: LimitWait[] = [];
  const started = clock.now();
  const results: RentResult[] = await Promise.all(
    Array.from({ length: 32 }, (_, i) => rentInstance(client, criteria, { image: "x", label: `w-${i}` }, { clock, onWait: (w) => waits.push(w) })),
  );
  const elapsed = clock.now() - started;
  const held = emu.marketplace.instances.all();
  expect(held).toHaveLength(32);
  expect(new Set(results.map((r) => r.offer.id)).size).toBe(32);
  expect(results.flatMap((r) => r.attempts.map((a) => a.outcome))).toEqual(Array(32).fill("rented"));
  // In the order asked: rental i made the i-th instance.
  expect([...held].sort((a, b) => a.id - b.id).map((i) => i.label)).toEqual(results.map((_, i) => `w-${i}`));
  // As fast as the limit allows: 31 windows of 3 s after the first creation, and no more.
  expect(elapsed).toBeGreaterThanOrEqual(31 * 3_000);
  expect(elapsed).toBeLessThanOrEqual(32 * 3_000);
  expect(searches()).toBe(1);
  // The herd of the first moment once (31), then one call at a time: at most one refusal a window.
  console.log(`32 rentals under the limits: ${elapsed / 1000} s on the emulator's clock, ${searches()} search(es), ${refusedCreations()} creation(s) refused (429)`);
  expect(refusedCreations()).toBeLessThanOrEqual(31 + 31);
  expect(waits[0]).toMatchObject({ endpoint: "PUT /api/v0/asks/{id}/", queued: 1 });
  expect(Math.max(...waits.map((w) => w.queued))).toBe(31);
});

it("a fleet of 32 under the same limits: rented whole, from one search", async () => {
  const clock = emulatorTime();
  const client = emu.client({ clock });
  const started = clock.now();
  const fleet = await rentFleet(client, 32, criteria, (i) => ({ image: "x", label: `f-${i}` }), { clock });
  expect(fleet.failures).toEqual([]);
  expect(new Set(fleet.rented.map((r) => r.instanceId)).size).toBe(32);
  expect(emu.marketplace.instances.all()).toHaveLength(32);
  expect(clock.now() - started).toBeLessThanOrEqual(32 * 3_000);
  expect(searches()).toBe(1);
});

it("the previews of 32 like resources and their rentals share the searches: a handful, not 64", async () => {
  const clock = emulatorTime();
  const client = emu.client({ clock });
  const warnings = await Promise.all(Array.from({ length: 32 }, () => rentalWarnings(client, criteria, undefined)));
  expect(warnings.flat()).toEqual([]);
  expect(searches()).toBe(1);
  await Promise.all(Array.from({ length: 32 }, () => rentInstance(client, criteria, { image: "x" }, { clock })));
  expect(emu.marketplace.instances.all()).toHaveLength(32);
  expect(searches()).toBeLessThanOrEqual(3);
});

describe("a wait past the rental's deadline", () => {
  it("a 429 asking longer than the rental may wait ends it at once, saying when to come back; nothing is made or left claimed", async () => {
    emu.marketplace.rateLimits.choose({ instance_create: { limit: 1, windowMs: 600_000 } });
    const clock = emulatorTime();
    const client = emu.client({ clock });
    await rentInstance(client, criteria, { image: "x" }, { clock });
    const started = clock.now();
    const error = await rentInstance(client, criteria, { image: "x", label: "late" }, { clock, deadlineMs: 60_000 }).catch((e) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.message).toMatch(/asks to wait 600 s before trying again \(Retry-After\), past the rental's deadline \(deadlineMs 60 s\) \(in 60 s\): try again after \d{4}-\d\d-\d\dT/);
    expect(clock.now() - started).toBeLessThan(1_000);
    expect(error.message).toMatch(/Nothing was rented \(offer \d+ is left for others\)/);
    expect(emu.marketplace.instances.all().filter((i) => i.label === "late")).toEqual([]);
    expect(GpuRentalClient.rentalsOf(client).acceptingOffers(client.apiUrl)).toEqual([]);
    // Its offer is free for the next rental: it was given back, not kept claimed.
    const next = await rentInstance(client, criteria, { image: "x" }, { clock, deadlineMs: 700_000 });
    expect(next.attempts.map((a) => a.outcome)).toEqual(["rented"]);
  });

  it("a rental queued behind others is told, as soon as its turn cannot come in time, that its deadline runs out first", async () => {
    const clock = emulatorTime();
    const client = emu.client({ clock });
    const rent = (label: string, deadlineMs: number) => rentInstance(client, criteria, { image: "x", label }, { clock, deadlineMs }).catch((e: Error) => e);
    const [a, b, c, d] = await Promise.all([rent("a", 60_000), rent("b", 60_000), rent("c", 60_000), rent("d", 5_000)]);
    expect([a, b, c].map((r) => r instanceof Error)).toEqual([false, false, false]);
    expect(d).toBeInstanceOf(RateLimitedError);
    expect((d as Error).message).toMatch(/PUT \/api\/v0\/asks\/\{id\}\/ was not sent: the service limits it for this key, and the call could not go by the rental's deadline \(deadlineMs 5 s\).*Nothing was sent: try again after \d{4}-/);
    expect(emu.marketplace.instances.all().map((i) => i.label).sort()).toEqual(["a", "b", "c"]);
    expect(GpuRentalClient.rentalsOf(client).acceptingOffers(client.apiUrl)).toEqual([]);
  });

  it("a rental interrupted while it waits in line leaves the line: nothing is sent for it, then or later", async () => {
    const clock = emulatorTime();
    const client = emu.client({ clock });
    const stop = new AbortController();
    const rent = (label: string, signal?: AbortSignal) =>
      rentInstance(client, criteria, { image: "x", label }, { clock, signal, onWait: () => label === "c" && stop.abort() }).catch((e: Error) => e);
    const [a, b, c] = await Promise.all([rent("a"), rent("b"), rent("c", stop.signal)]);
    expect([a, b].map((r) => r instanceof Error)).toEqual([false, false]);
    expect(c).toBeInstanceOf(InterruptedError);
    expect((c as Error).message).toMatch(/waiting for the service's limit, and was not sent/);
    await clock.sleep(60_000);
    expect(emu.marketplace.instances.all().map((i) => i.label).sort()).toEqual(["a", "b"]);
    expect(GpuRentalClient.rentalsOf(client).acceptingOffers(client.apiUrl)).toEqual([]);
  });
});
