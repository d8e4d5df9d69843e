import { emulator, http, TestEmulator } from "../helpers/emulator";

/**
 * emulator/INSTANCES.md, "The live service's moves": the emulator answers as the live service answers today
 * (docs/service-facts.md#where-the-live-service-has-moved-on), over raw HTTP. One test a row;
 * what the SDK makes of each answer is in test/sdk/live-answers.test.ts.
 */
let emu: TestEmulator;
const call = (method: string, path: string, body?: unknown, key = emu.apiKey) => http(emu.url, method, path, { key, body });
const settings = async (body: Record<string, unknown>) => expect((await http(emu.url, "PUT", "/_emulator/settings", { body })).status).toBe(200);
const offers = async (query: Record<string, unknown> = {}) => (await call("POST", "/api/v0/bundles/", { order: [["dph_total", "asc"]], ...query })).body.offers as any[];
const view = async (id: number) => (await call("GET", `/api/v0/instances/${id}/`)).body.instances;
const DAY = 86_400_000;

beforeAll(async () => {
  emu = await emulator();
});
afterAll(() => emu.close());

describe("a bid below the minimum still makes an instance", () => {
  afterEach(() => settings({ lowBidStatus: 400 }));

  it("answers 400 invalid_price carrying new_contract: the instance exists, stopped (outbid), billing storage, its offer taken", async () => {
    const [offer] = await offers({ type: "bid", limit: 1 });
    const res = await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu", price: offer.min_bid / 2 });
    expect(res).toMatchObject({ status: 400, body: { success: false, error: "invalid_price", msg: expect.stringMatching(/minimum bid/), new_contract: expect.any(Number) } });
    const made = await view(res.body.new_contract);
    expect(made).toMatchObject({ is_bid: true, actual_status: "exited", intended_status: "stopped", status_msg: expect.stringMatching(/Outbid/) });
    expect(await offers({ id: { eq: offer.id } })).toEqual([]);
    const before = emu.marketplace.accounts.user(emu.marketplace.seededUser.id)!.credit;
    emu.marketplace.clock.advance(3_600_000);
    emu.marketplace.instances.settle();
    const charged = before - emu.marketplace.accounts.user(emu.marketplace.seededUser.id)!.credit;
    expect(charged).toBeGreaterThan(0);
    expect(charged).toBeLessThan(offer.min_bid / 2); // storage only, no compute
    await call("DELETE", `/api/v0/instances/${res.body.new_contract}/`, {});
  });

  it("with lowBidStatus 200: 200 with success false, the same body", async () => {
    await settings({ lowBidStatus: 200 });
    const [offer] = await offers({ type: "bid", limit: 1 });
    const res = await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu", price: offer.min_bid / 2 });
    expect(res).toMatchObject({ status: 200, body: { success: false, error: "invalid_price", new_contract: expect.any(Number) } });
    expect(await view(res.body.new_contract)).toMatchObject({ intended_status: "stopped" });
    await call("DELETE", `/api/v0/instances/${res.body.new_contract}/`, {});
  });
});

describe("the daily search quota", () => {
  afterEach(() => settings({ searchQuota: { rowsPerDay: 0 } }));

  it("is off by default; once a key's rows of the day reach it, 429 search_quota_exceeded with X-RateLimit-Reset at midnight UTC", async () => {
    expect((await http(emu.url, "GET", "/_emulator/state")).body.searchQuota).toEqual({ rowsPerDay: 0 });
    await settings({ searchQuota: { rowsPerDay: 30 } });
    expect(await offers({ limit: 20 })).toHaveLength(20);
    expect(await offers({ limit: 20 })).toHaveLength(20); // 40 rows: the quota is spent after this search
    const refused = await call("POST", "/api/v0/bundles/", { limit: 1 });
    const midnight = (Math.floor(emu.marketplace.clock.now() / DAY) + 1) * (DAY / 1000);
    expect(refused).toMatchObject({ status: 429, body: { error: "search_quota_exceeded", msg: expect.stringMatching(/quota/) } });
    expect(refused.headers.get("x-ratelimit-reset")).toBe(String(midnight));
    // Per key: another key of another account still searches.
    const other = emu.account("quota-other@gpu-rental.test");
    expect((await call("POST", "/api/v0/bundles/", { limit: 1 }, other.key)).status).toBe(200);
    // It comes back at midnight UTC.
    emu.marketplace.clock.advance(midnight * 1000 - emu.marketplace.clock.now());
    expect((await call("POST", "/api/v0/bundles/", { limit: 1 })).status).toBe(200);
  });
});

describe("two acceptances of one offer", () => {
  it("with doubleAcceptances, the next acceptances both succeed; the second never boots, and destroying it frees no offer", async () => {
    const [offer] = await offers({ limit: 1 });
    const first = (await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu" })).body.new_contract;
    expect((await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu" })).body.error).toBe("no_such_ask");
    await settings({ doubleAcceptances: 2 });
    const second = await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu" });
    expect(second).toMatchObject({ status: 200, body: { success: true, new_contract: expect.any(Number) } });
    // An offer on the market accepted "at the same moment" as another tenant's acceptance: answered, never booting.
    const [free] = await offers({ limit: 1 });
    const raced = (await call("PUT", `/api/v0/asks/${free.id}/`, { image: "ubuntu" })).body.new_contract;
    expect((await http(emu.url, "GET", "/_emulator/state")).body.doubleAcceptances).toBe(0);
    emu.marketplace.clock.advance(DAY);
    expect(await view(first)).toMatchObject({ actual_status: "running" });
    expect(await view(second.body.new_contract)).toMatchObject({ actual_status: "loading" });
    expect(await view(raced)).toMatchObject({ actual_status: "loading" });
    expect(await offers({ id: { eq: free.id } })).toEqual([]); // the other tenant holds it
    for (const id of [second.body.new_contract, raced]) await call("DELETE", `/api/v0/instances/${id}/`, {});
    expect(await offers({ id: { in: [offer.id, free.id] } })).toEqual([]);
    await call("DELETE", `/api/v0/instances/${first}/`, {});
    expect((await offers({ id: { eq: offer.id } })).map((o) => o.id)).toEqual([offer.id]);
  });
});

describe("the v1 listing", () => {
  it("refuses select_filters on computed fields (dph_total, num_gpus) with 400; stored ones filter", async () => {
    const listing = (filters: unknown) => call("GET", `/api/v1/instances/?select_filters=${encodeURIComponent(JSON.stringify(filters))}`);
    for (const filters of [{ dph_total: { lte: 1 } }, { num_gpus: { eq: 1 } }, { label: { eq: "x" }, num_gpus: { gte: 1 } }]) {
      const res = await listing(filters);
      expect(res).toMatchObject({ status: 400, body: { error: "invalid_args", msg: expect.stringMatching(/computed/) } });
    }
    expect(await listing({ label: { eq: "x" }, dph_total: null })).toMatchObject({ status: 200, body: { success: true, instances_found: 0, instances: [] } });
  });
});

describe("SSH keys and the user record", () => {
  const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl live@test";

  it("a key list is a bare array; adding answers {success, key}; created_at is epoch seconds, a float", async () => {
    emu.marketplace.clock.advance(1_234);
    const added = await call("POST", "/api/v0/ssh/", { ssh_key: KEY });
    expect(added).toMatchObject({ status: 200, body: { success: true, key: { id: expect.any(Number), user_id: emu.marketplace.seededUser.id, public_key: KEY, deleted_at: null } } });
    expect(Number.isInteger(added.body.key.created_at)).toBe(false);
    expect(added.body.key.created_at).toBeCloseTo(emu.marketplace.clock.nowSeconds(), 3);
    const listed = await call("GET", "/api/v0/ssh/");
    expect(listed.body).toEqual([expect.objectContaining({ id: added.body.key.id, key: KEY, public_key: KEY })]);
    expect((await call("PUT", `/api/v0/ssh/${added.body.key.id}/`, { ssh_key: KEY })).body).toMatchObject({ success: true, key: { id: added.body.key.id } });
  });

  it("attaching a key to an instance answers {success, msg, key} with the key as JSON text", async () => {
    const [offer] = await offers({ limit: 1 });
    const id = (await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu", runtype: "ssh_direct" })).body.new_contract;
    const res = await call("POST", `/api/v0/instances/${id}/ssh/`, { ssh_key: KEY });
    expect(res.body).toMatchObject({ success: true, msg: expect.any(String), key: expect.any(String) });
    expect(JSON.parse(res.body.key)).toMatchObject({ public_key: KEY, created_at: expect.any(Number), deleted_at: null });
    await call("DELETE", `/api/v0/instances/${id}/`, {});
  });

  it("the user record names the user fullname (as the live service does) and full_name (as the spec does)", async () => {
    expect((await call("GET", "/api/v0/users/current/")).body).toMatchObject({ fullname: "Demo User", full_name: "Demo User" });
  });
});

describe("network volumes, not generally released", () => {
  it("an account without the feature is refused on their endpoints, 403 not_authorized; others are not", async () => {
    const { id, key } = emu.account("no-volumes@gpu-rental.test");
    const flag = await http(emu.url, "PUT", `/_emulator/users/${id}`, { body: { network_volumes: false } });
    expect(flag.body.user).toMatchObject({ network_volumes: false });
    const search = await call("POST", "/api/v0/network_volumes/search/", { q: {} }, key);
    expect(search).toMatchObject({ status: 403, body: { success: false, error: "not_authorized" } });
    const create = await call("PUT", "/api/v0/network_volumes/", { id: 70000, size: 1 }, key);
    expect(create).toMatchObject({ status: 403, body: { error: "not_authorized" } });
    expect((await call("POST", "/api/v0/network_volumes/search/", { q: {} })).status).toBe(200);
    expect((await call("POST", "/api/v0/volumes/search/", { limit: 1 }, key)).status).toBe(200); // local volumes are released
  });
});
