import { DEFAULT_RATE_LIMITS } from "../../emulator/domain/ratelimits";
import { emulator, http, TestEmulator } from "../helpers/emulator";

/** Rate limiting (the spec: HTTP 429 on network volume search), per key, on the emulator's clock. */
let emu: TestEmulator;
beforeEach(async () => {
  emu = await emulator();
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

it("limits offer search and instance creation only when switched on", async () => {
  for (let i = 0; i < 50; i++) expect((await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { limit: 1 } })).status).toBe(200);
  const settings = await http(emu.url, "PUT", "/_emulator/settings", { body: { rateLimits: { instance_create: { limit: 1, windowMs: 3000 } } } });
  expect(settings.status).toBe(200);
  const [a, b] = (await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { limit: 2 } })).body.offers;
  expect((await http(emu.url, "PUT", `/api/v0/asks/${a.id}/`, { key: emu.apiKey, body: { image: "x" } })).status).toBe(200);
  const refused = await http(emu.url, "PUT", `/api/v0/asks/${b.id}/`, { key: emu.apiKey, body: { image: "x" } });
  expect(refused).toMatchObject({ status: 429, body: { error: "rate_limited" } });
  // Refused before anything was rented: the offer is still on the market.
  expect((await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { id: { eq: b.id } } })).body.offers).toHaveLength(1);
  emu.marketplace.clock.advance(3000);
  expect((await http(emu.url, "PUT", `/api/v0/asks/${b.id}/`, { key: emu.apiKey, body: { image: "x" } })).status).toBe(200);
});
