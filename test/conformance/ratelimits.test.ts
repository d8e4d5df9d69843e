import { DEFAULT_RATE_LIMITS } from "../../emulator/domain/ratelimits";
import { emulator, http, TestEmulator } from "../helpers/emulator";

/**
 * Rate limiting (the spec: HTTP 429 on network volume search; the live service: offer search and instance creation
 * too), per key, on the emulator's clock. The emulator starts with the service's limits, as a user starts it.
 */
let emu: TestEmulator;
beforeEach(async () => {
  emu = await emulator({ rateLimits: "service" });
});
afterEach(() => emu.close());

const search = (key = emu.apiKey) => http(emu.url, "POST", "/api/v0/network_volumes/search/", { key, body: { q: { limit: 1 } } });

it("answers 429 {success: false, error, msg} with Retry-After once network volume search exceeds its limit", async () => {
  const { limit, windowMs } = DEFAULT_RATE_LIMITS.network_volume_search;
  for (let i = 0; i < limit; i++) expect((await search()).status).toBe(200);
  const refused = await search();
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual({ success: false, error: "rate_limited", msg: expect.stringMatching(/Too many requests/), retry_after: 60 });
  expect(refused.headers.get("retry-after")).toBe("60");

  // Per key: another user's key is not limited by this one's calls.
  const other = await http(emu.url, "POST", "/_emulator/users", { body: { email: "second@gpu-rental.test" } });
  expect((await search(other.body.api_key)).status).toBe(200);

  // The window slides on the emulator's clock.
  emu.marketplace.clock.advance(windowMs);
  expect((await search()).status).toBe(200);
});

it("limits offer search and instance creation by default as the live service does; the setting \"off\" lifts every limit", async () => {
  const bundles = () => http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { limit: 1 } });
  expect(DEFAULT_RATE_LIMITS).toMatchObject({ offer_search: { limit: 10, windowMs: 60_000 }, instance_create: { limit: 1, windowMs: 3_000 } });
  for (let i = 0; i < 10; i++) expect((await bundles()).status).toBe(200);
  const searches = await bundles();
  expect(searches.status).toBe(429);
  expect(searches.headers.get("retry-after")).toBe("60");

  const off = await http(emu.url, "PUT", "/_emulator/settings", { body: { rateLimits: "off" } });
  expect(off.status).toBe(200);
  expect(off.body.rateLimits.offer_search.limit).toBe(0);
  for (let i = 0; i < 50; i++) expect((await bundles()).status).toBe(200);
  const settings = await http(emu.url, "PUT", "/_emulator/settings", { body: { rateLimits: { instance_create: { limit: 1, windowMs: 3000 } } } });
  expect(settings.status).toBe(200);
  expect(settings.body.rateLimits).toMatchObject({ offer_search: { limit: 0 }, instance_create: { limit: 1, windowMs: 3000 } });
  const [a, b] = (await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { limit: 2 } })).body.offers;
  expect((await http(emu.url, "PUT", `/api/v0/asks/${a.id}/`, { key: emu.apiKey, body: { image: "x" } })).status).toBe(200);
  const refused = await http(emu.url, "PUT", `/api/v0/asks/${b.id}/`, { key: emu.apiKey, body: { image: "x" } });
  expect(refused).toMatchObject({ status: 429, body: { error: "rate_limited", retry_after: 3 } });
  expect(refused.body.msg).toMatch(/Retry in 3 s/);
  // Refused before anything was rented: the offer is still on the market.
  expect((await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { id: { eq: b.id } } })).body.offers).toHaveLength(1);
  emu.marketplace.clock.advance(3000);
  expect((await http(emu.url, "PUT", `/api/v0/asks/${b.id}/`, { key: emu.apiKey, body: { image: "x" } })).status).toBe(200);

  // "service" puts the live service's back.
  expect((await http(emu.url, "PUT", "/_emulator/settings", { body: { rateLimits: "service" } })).body.rateLimits).toEqual(DEFAULT_RATE_LIMITS);
});

it("starts without limits when told so (rateLimits: \"off\", gpu-rental emulator --no-rate-limits)", async () => {
  const free = await emulator({ rateLimits: "off" });
  try {
    for (let i = 0; i < 20; i++) expect((await http(free.url, "POST", "/api/v0/bundles/", { key: free.apiKey, body: { limit: 1 } })).status).toBe(200);
  } finally {
    await free.close();
  }
});
