import {
  BadRequestError,
  GpuRentalClient,
  ListingError,
  NetworkError,
  OfferUnavailableError,
  RateLimitedError,
  RetryEvent,
  ServerError,
  UnauthorizedError,
} from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";

let emu: TestEmulator;
let client: GpuRentalClient;

beforeAll(async () => {
  emu = await emulator({ seed: 7 });
  client = emu.client();
});
afterAll(() => emu.close());
afterEach(() => emu.faults.clear());

describe("offer search", () => {
  it("filters with every operator, coercing values sent as strings", async () => {
    const offers = await client.offers.search({
      filters: {
        gpu_name: { in: ["RTX 4090", "RTX 3090"] },
        num_gpus: { eq: "1" as unknown as number },
        reliability: { gte: 0.95 },
        dph_total: { lt: 0.6, gt: 0.1 },
        verified: { eq: "true" as unknown as boolean },
        geolocation: { neq: "Texas, US" },
        inet_down: { lte: 8000 },
        machine_id: { notin: ["1000", "1001"] as unknown as number[] },
        not_a_field: { eq: 1 },
      },
      limit: 500,
    });
    expect(offers.length).toBeGreaterThan(0);
    for (const offer of offers) {
      expect(["RTX 4090", "RTX 3090"]).toContain(offer.gpu_name);
      expect(offer.num_gpus).toBe(1);
      expect(offer.reliability).toBeGreaterThanOrEqual(0.95);
      expect(offer.dph_total).toBeLessThan(0.6);
      expect(offer.dph_total).toBeGreaterThan(0.1);
      expect(offer.verified).toBe(true);
      expect(offer.geolocation).not.toBe("Texas, US");
      expect([1000, 1001]).not.toContain(offer.machine_id);
    }
  });

  it("gives each offer once and in market order, whichever filter narrows the search", async () => {
    const twice = await client.offers.search({ filters: { gpu_name: { in: ["RTX 4090", "RTX 4090", "RTX 3090"] }, num_gpus: { in: [1, "1", 2] as number[] } }, limit: 1000 });
    const once = await client.offers.search({ filters: { gpu_name: { in: ["RTX 3090", "RTX 4090"] }, num_gpus: { gte: 1, lte: 2 } }, limit: 1000 });
    expect(twice.length).toBeGreaterThan(10);
    expect(new Set(twice.map((o) => o.id)).size).toBe(twice.length);
    expect(twice.map((o) => o.id)).toEqual(once.map((o) => o.id));
    expect(twice.map((o) => o.id)).toEqual([...twice.map((o) => o.id)].sort((a, b) => a - b));
  });

  it("orders on numeric fields in both directions and honours limit", async () => {
    const asc = await client.offers.search({ order: [["dph_total", "asc"]], limit: 10 });
    const desc = await client.offers.search({ order: [["dlperf", "desc"]], limit: 10 });
    expect(asc).toHaveLength(10);
    expect(asc.map((o) => o.dph_total)).toEqual([...asc.map((o) => o.dph_total)].sort((a, b) => a - b));
    expect(desc.map((o) => o.dlperf)).toEqual([...desc.map((o) => o.dlperf as number)].sort((a, b) => b - a));
  });

  it("prices bids at the minimum bid", async () => {
    const [onDemand] = await client.offers.search({ filters: { id: { eq: 10003 } } });
    const [bid] = await client.offers.search({ filters: { id: { eq: 10003 } }, type: "bid" });
    expect(bid.is_bid).toBe(true);
    expect(bid.dph_total).toBe(onDemand.min_bid);
  });
});

describe("instances", () => {
  it("creates, lists, relabels, stops, starts and destroys; a rented offer leaves the market", async () => {
    const [offer] = await client.offers.search({ filters: { direct_port_count: { gte: 1 } }, order: [["dph_total", "asc"]], limit: 1 });
    const created = await client.instances.create(offer.id, { image: "pytorch/pytorch", runtype: "ssh_direct", label: "a" });
    expect(created.success).toBe(true);
    expect(created.instance_api_key).toMatch(/^[0-9a-f]{64}$/);
    expect(await client.offers.search({ filters: { id: { eq: offer.id } } })).toEqual([]);

    const id = created.new_contract;
    const listed = await client.instances.list();
    expect(listed.map((i) => i.id)).toContain(id);
    let instance = await client.instances.get(id);
    expect(instance).toMatchObject({ id, actual_status: null, label: "a", gpu_name: offer.gpu_name, ssh_port: expect.any(Number) });
    expect(instance!.ports).toHaveProperty(["22/tcp"]);

    await client.instances.update(id, { label: "b" });
    await client.instances.update(id, { state: "stopped" });
    instance = await client.instances.get(id);
    expect(instance).toMatchObject({ label: "b", cur_state: "stopped", actual_status: "exited" });
    await client.instances.update(id, { state: "running" });
    expect((await client.instances.get(id))!.actual_status).toBe("loading");

    await client.instances.destroy(id);
    expect(await client.instances.get(id)).toBeNull();
    expect((await client.instances.list()).map((i) => i.id)).not.toContain(id);
    expect(await client.offers.search({ filters: { id: { eq: offer.id } } })).toHaveLength(1);
  });

  it("validates a creation request before sending it", async () => {
    await expect(client.instances.create(10010, { label: "no image" })).rejects.toThrow(BadRequestError);
    await expect(client.instances.create(10010, { label: "no image" })).rejects.toThrow(/image or template_hash_id/);
  });
});

describe("typed errors", () => {
  it("carries the service's error code and message", async () => {
    const error = await client.instances.create(999_999, { image: "x" }).catch((e) => e);
    expect(error).toBeInstanceOf(OfferUnavailableError);
    expect(error).toMatchObject({ status: 404, code: "no_such_ask", request: { method: "PUT", path: "/api/v0/asks/999999/" } });
    expect(error.serviceMessage).toMatch(/Offer 999999/);
  });

  it("maps a bad key to UnauthorizedError and never shows the key", async () => {
    const bad = new GpuRentalClient({ apiUrl: emu.url, apiKey: "not-a-real-key-123" });
    const error = await bad.users.current().catch((e) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error.status).toBe(401);
    expect(JSON.stringify(error) + String(error.stack)).not.toContain("not-a-real-key-123");
  });

  it("reports a service that is not there as a NetworkError", async () => {
    const gone = new GpuRentalClient({ apiUrl: "http://127.0.0.1:1", apiKey: "k", retries: 1, minRetryDelayMs: 1 });
    await expect(gone.users.current()).rejects.toThrow(NetworkError);
  });
});

describe("retries", () => {
  it("retries 429, 5xx and dropped connections on idempotent calls, then succeeds", async () => {
    const events: RetryEvent[] = [];
    const retrying = emu.client({ onRetry: (e) => events.push(e) });
    emu.faults.add({ path: "/api/v0/users/current", kind: "status", status: 429, times: 1 });
    emu.faults.add({ path: "/api/v0/users/current", kind: "status", status: 503, times: 1 });
    emu.faults.add({ path: "/api/v0/users/current", kind: "drop", times: 1 });
    emu.faults.add({ path: "/api/v0/users/current", kind: "status", status: 500, times: 1 });
    const user = await retrying.users.current();
    expect(user.email).toBe("demo@gpu-rental.test");
    expect(events.map((e) => e.error.constructor)).toEqual([RateLimitedError, ServerError, NetworkError, ServerError]);
  });

  it("gives up after the retry budget with the last error", async () => {
    emu.faults.add({ path: "/api/v1/instances/", kind: "status", status: 502, times: 10 });
    const retries: RetryEvent[] = [];
    const error = await emu.client({ retries: 2, onRetry: (e) => retries.push(e) }).instances.list().catch((e) => e);
    // A listing that fails is a ListingError (never an empty listing), carrying the last error.
    expect(error).toBeInstanceOf(ListingError);
    expect(error.cause).toBeInstanceOf(ServerError);
    expect(error.status).toBe(502);
    expect(retries).toHaveLength(2);
    expect(emu.faults.list()[0].times).toBe(7);
  });

  it("takes a DELETE whose answer was lost as done when its retry finds the instance gone", async () => {
    const [offer] = await client.offers.search({ limit: 1, order: [["dph_total", "desc"]] });
    const { new_contract: id } = await client.instances.create(offer.id, { image: "x" });
    emu.faults.add({ path: `/api/v0/instances/${id}/`, method: "DELETE", kind: "lost_response", times: 1 });
    await client.instances.destroy(id);
    expect(await client.instances.get(id)).toBeNull();
    // A first try that finds nothing is still an error.
    await expect(client.instances.destroy(id)).rejects.toMatchObject({ status: 404 });
  });

  it("does not resend an instance creation whose outcome is unknown (5xx), but does after a 429", async () => {
    const [offer] = await client.offers.search({ limit: 1, order: [["dph_total", "desc"]] });
    emu.faults.add({ path: "/api/v0/asks/", kind: "status", status: 500, times: 1 });
    await expect(client.instances.create(offer.id, { image: "x" })).rejects.toThrow(ServerError);
    emu.faults.add({ path: "/api/v0/asks/", kind: "status", status: 429, times: 1 });
    const created = await client.instances.create(offer.id, { image: "x" });
    await client.instances.destroy(created.new_contract);
  });
});
