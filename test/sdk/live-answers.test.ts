import { BadRequestError, fullNameOf, GpuRentalClient, NetworkVolumesUnavailableError, publicKeyOf, RateLimitedError, rentInstance, RetryEvent, SearchQuotaExceededError, UnauthorizedError, WaitClock } from "../../sdk";
import { GPU_FLEET, INSTANCE, NETWORK_VOLUME, direct } from "../../provider/lifecycle";
import { emulator, http, TestEmulator } from "../helpers/emulator";

const GpuFleet = direct(GPU_FLEET);
const Instance = direct(INSTANCE);
const NetworkVolume = direct(NETWORK_VOLUME);

/**
 * What the SDK makes of the answers of the live service today (docs/service-facts.md#where-the-live-service-has-moved-on), against the emulator answering so (test/conformance/live-answers.test.ts) or a fault
 * injected where the emulator keeps the spec's answer (a bad key is 401 there; 404 `auth_error` on some live
 * endpoints).
 */
let emu: TestEmulator;
let client: GpuRentalClient;
const DAY = 86_400_000;
const settings = async (body: Record<string, unknown>) => expect((await http(emu.url, "PUT", "/_emulator/settings", { body })).status).toBe(200);
const held = () => emu.marketplace.instances.all();

beforeAll(async () => {
  emu = await emulator();
  client = emu.client();
});
afterAll(() => emu.close());
afterEach(async () => {
  emu.faults.clear();
  await settings({ searchQuota: { rowsPerDay: 0 }, lowBidStatus: 400, doubleAcceptances: 0 });
});

/** Time for waits on the emulator's clock: a boot deadline of minutes passes without sleeping. */
const emulatorTime = (): WaitClock => ({ now: () => emu.marketplace.clock.now(), sleep: async (ms) => emu.marketplace.clock.advance(ms) });

describe("the daily search quota", () => {
  it("stops a rental at its first search: no retry, and the error says it is spent and when it resets", async () => {
    await settings({ searchQuota: { rowsPerDay: 5 } });
    await client.offers.search({ limit: 5 }); // spends it
    const retries: RetryEvent[] = [];
    const quoted = emu.client({ onRetry: (e) => retries.push(e) });
    let searches = 0;
    const search = quoted.offers.search;
    quoted.offers.search = (query) => (searches++, search(query));
    const error = await rentInstance(quoted, { filters: { gpu_name: { eq: "RTX 4090" } } }, { image: "x" }).catch((e) => e);
    expect(error).toBeInstanceOf(SearchQuotaExceededError);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect([searches, retries.length]).toEqual([1, 0]);
    const midnight = new Date((Math.floor(emu.marketplace.clock.now() / DAY) + 1) * DAY);
    expect(error.resetsAt).toEqual(midnight);
    expect(error.message).toMatch(new RegExp(`daily search quota of this API key is spent .*It resets at ${midnight.toISOString()}.*nothing was retried`));
    expect(held()).toHaveLength(0);
  });
});

describe("429s", () => {
  it("honours a Retry-After up to the bound; beyond it, a clear error at once, saying when to come back", async () => {
    // A client of its own: the 120 s the service asks below holds back every later call of the endpoint by it.
    const client = emu.client();
    emu.faults.add({ path: "/api/v0/users/current", kind: "status", status: 429, retryAfterSeconds: 1 });
    let started = Date.now();
    expect((await client.users.current()).id).toBe(emu.marketplace.seededUser.id);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    emu.faults.add({ path: "/api/v0/users/current", kind: "status", status: 429, retryAfterSeconds: 120 });
    started = Date.now();
    const error = await client.users.current().catch((e) => e);
    expect(Date.now() - started).toBeLessThan(900);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.retryAfterMs).toBe(120_000);
    expect(error.message).toMatch(/asks to wait 120 s before trying again \(Retry-After\), longer than this call waits \(45 s\): try again after \d{4}-\d\d-\d\dT/);
    // The call's deadline (45 s) bounds the wait before the 60 s bound does; a client that allows less waits less.
    emu.faults.add({ path: "/api/v0/users/current", kind: "status", status: 429, retryAfterSeconds: 1 });
    await expect(emu.client({ maxRetryAfterMs: 500 }).users.current()).rejects.toThrow(/longer than this call waits \(0\.5 s\)/);
  });

  it("reads a plain-text 429 (as some live ones are): its text is the message, and it is retried", async () => {
    const text = "API requests too frequent: endpoint threshold=1.0";
    emu.faults.add({ path: "/api/v0/users/current", kind: "status", status: 429, text });
    const events: RetryEvent[] = [];
    expect((await emu.client({ onRetry: (e) => events.push(e) }).users.current()).id).toBe(emu.marketplace.seededUser.id);
    expect(events.map((e) => [e.error.constructor, e.error.serviceMessage])).toEqual([[RateLimitedError, text]]);
  });
});

describe("a key answered 404 auth_error", () => {
  const badKey = { kind: "status", status: 404, error: "auth_error", msg: "Invalid user key", times: 100 } as const;

  it("is an authentication failure, never 'not found': a search, a rental and a key read raise UnauthorizedError", async () => {
    emu.faults.add({ path: "/api/v0/bundles/", ...badKey });
    const search = await client.offers.search({ limit: 1 }).catch((e) => e);
    expect(search).toBeInstanceOf(UnauthorizedError);
    expect(search).toMatchObject({ status: 404, code: "auth_error", serviceMessage: "Invalid user key" });
    await expect(rentInstance(client, {}, { image: "x" })).rejects.toBeInstanceOf(UnauthorizedError);

    const key = await client.apiKeys.create({ name: "read-me" });
    emu.faults.add({ path: `/api/v0/auth/apikeys/${key.id}/`, method: "GET", ...badKey });
    await expect(client.apiKeys.get(key.id)).rejects.toBeInstanceOf(UnauthorizedError);
    emu.faults.clear();
    expect((await client.apiKeys.get(key.id))!.id).toBe(key.id);
    await client.apiKeys.delete(key.id);
  });
});

describe("a refused creation that made an instance all the same (new_contract)", () => {
  it.each([[400], [200]])("at %i: a rental destroys it, says so, and leaves 0 instances", async (status) => {
    await settings({ lowBidStatus: status });
    const [offer] = await client.offers.search({ type: "bid", order: [["dph_total", "asc"]], limit: 1 });
    const error = await rentInstance(client, { type: "bid", offerId: offer.id }, { image: "x", price: offer.min_bid! / 2 }).catch((e) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).toMatchObject({ code: "invalid_price", newContract: expect.any(Number), strayInstance: { id: error.newContract, outcome: "destroyed" } });
    expect(error.message).toMatch(new RegExp(`made instance ${error.newContract} all the same: it was destroyed, nothing is left billing`));
    expect(emu.marketplace.instances.all()).toHaveLength(0);
    // The service did make it: the instance number was used.
    expect(emu.marketplace.stats.offersAccepted).toBeGreaterThan(0);
  });

  it("keeps it when it is exactly what was asked for (a stopped bid instance), and the answer carries the refusal", async () => {
    const [offer] = await client.offers.search({ type: "bid", order: [["dph_total", "asc"]], limit: 1 });
    const created = await client.instances.create(offer.id, { image: "x", price: offer.min_bid! / 2, target_state: "stopped" });
    expect(created).toMatchObject({ success: true, new_contract: expect.any(Number) });
    expect(created.refusal).toBeInstanceOf(BadRequestError);
    expect(created.refusal!.message).toMatch(/as requested: it is kept/);
    expect(await client.instances.get(created.new_contract)).toMatchObject({ intended_status: "stopped" });
    await client.instances.destroy(created.new_contract);
  });
});

describe("an offer accepted twice, whose instance never boots", () => {
  it("an Instance: destroyed at the boot deadline and rented again", async () => {
    await settings({ doubleAcceptances: 1 });
    const lines: string[] = [];
    const { outs } = await Instance.create(
      { image: "x", gpuCount: 1 },
      { client, log: (line) => lines.push(line), wait: { clock: emulatorTime(), timeoutMs: 10 * 60_000, pollMs: 5_000 } },
    );
    expect(outs.status).toBe("running");
    expect(lines.join("\n")).toMatch(/did not reach running in 600 s \(last status: loading\)\.\): destroyed, renting another \(2 of 3\)/);
    expect(held().map((i) => i.id)).toEqual([outs.instanceId]);
    await client.instances.destroy(outs.instanceId);
  });

  it("a GpuFleet of 8 with three such acceptances: 8 running, none left behind", async () => {
    await settings({ doubleAcceptances: 3 });
    const before = emu.marketplace.stats.secondAcceptances!;
    const { outs } = await GpuFleet.create(
      { image: "x", gpuCount: 1, labelPrefix: "w", size: 8 },
      { client, wait: { clock: emulatorTime(), timeoutMs: 10 * 60_000, pollMs: 5_000 } },
    );
    expect((await http(emu.url, "GET", "/_emulator/state")).body).toMatchObject({ doubleAcceptances: 0, stats: { secondAcceptances: before + 3 } });
    expect(outs.members.map((m) => m.status)).toEqual(Array(8).fill("running"));
    expect(held().map((i) => i.id).sort()).toEqual([...outs.instanceIds].sort());
    for (const id of outs.instanceIds) await client.instances.destroy(id);
  });
});

describe("SSH keys, the user record and network volumes in the live shapes", () => {
  const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl sdk@test";

  it("adds, lists, attaches and deletes SSH keys", async () => {
    const added = await client.sshKeys.add(KEY);
    expect(publicKeyOf(added)).toBe(KEY);
    expect(typeof added.created_at).toBe("number");
    expect((await client.sshKeys.list()).map((k) => [k.id, publicKeyOf(k)])).toEqual([[added.id, KEY]]);
    const [offer] = await client.offers.search({ limit: 1 });
    const { new_contract: id } = await client.instances.create(offer.id, { image: "x", runtype: "ssh_direct" });
    await client.sshKeys.attach(id, KEY);
    await client.sshKeys.delete(added.id);
    expect(await client.sshKeys.list()).toEqual([]);
    await client.instances.destroy(id);
  });

  it("reads the user's name from fullname", async () => {
    expect(fullNameOf(await client.users.current())).toBe("Demo User");
  });

  it("finds a network volume created without an id in the answer by its name and token", async () => {
    const { outs } = await NetworkVolume.create({ size: 3, name: "data" }, { client });
    const listed = emu.marketplace.volumes.list(emu.marketplace.seededUser.id);
    expect(listed.map((v) => v.id)).toEqual([outs.volumeId]);
    expect(outs.volumeName).toMatch(/^data-gr-[a-z2-7]{10}$/);
    await client.volumes.delete(outs.volumeId);
  });

  it("says that network volumes are not generally released when the account is refused them", async () => {
    const { id, key } = emu.account("no-network-volumes@gpu-rental.test");
    await http(emu.url, "PUT", `/_emulator/users/${id}`, { body: { network_volumes: false } });
    const theirs = emu.client({ apiKey: key });
    for (const attempt of [() => theirs.volumes.searchNetworkOffers(), () => NetworkVolume.create({ size: 1 }, { client: theirs })]) {
      const error = await attempt().catch((e) => e);
      expect(error).toBeInstanceOf(NetworkVolumesUnavailableError);
      expect(error).toMatchObject({ status: 403, code: "not_authorized" });
      expect(error.message).toMatch(/Network volumes are not available to this account.*not generally released on the service: ask its support/);
    }
    expect(emu.marketplace.volumes.list(id)).toEqual([]);
  });
});
