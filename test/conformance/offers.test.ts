import { emulator, http, TestEmulator } from "../helpers/emulator";

/** Spec: Endpoints › Offer search (`POST /api/v0/bundles/`), with the offer fields of
 * docs/service-facts.md#answers-clients-rely-on. */
describe("offer search", () => {
  let emu: TestEmulator;
  const search = async (body: unknown) => {
    const res = await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body });
    expect(res.status).toBe(200);
    return res.body.offers as Record<string, any>[];
  };

  beforeAll(async () => {
    emu = await emulator();
  });
  afterAll(() => emu.close());

  it("answers {offers: [...]} with every offer field of the service facts, as numbers", async () => {
    const offers = await search({ limit: 50 });
    expect(offers).toHaveLength(50);
    const numeric = [
      "id", "num_gpus", "dph_total", "machine_id", "host_id", "gpu_ram", "gpu_total_ram", "cpu_cores", "cpu_cores_effective",
      "cpu_ram", "cpu_ghz", "disk_space", "disk_bw", "inet_up", "inet_down", "reliability", "dlperf", "dlperf_per_dphtotal",
      "score", "cuda_max_good", "pcie_bw", "direct_port_count", "hosting_type", "dph_base", "storage_cost", "start_date",
      "end_date", "duration",
    ];
    for (const offer of offers) {
      for (const field of numeric) expect(typeof offer[field]).toBe("number");
      expect(offer.min_bid === null || typeof offer.min_bid === "number").toBe(true);
      expect(typeof offer.gpu_name).toBe("string");
      expect(typeof offer.driver_version).toBe("string");
      expect(offer.geolocation).toMatch(/, [A-Z]{2}$/);
      expect(["verified", "unverified", "deverified"]).toContain(offer.verification);
      expect(typeof offer.rentable).toBe("boolean");
      expect(typeof offer.rented).toBe("boolean");
      expect(offer.is_bid).toBe(false);
      expect(offer.reliability).toBeGreaterThan(0);
      expect(offer.reliability).toBeLessThanOrEqual(1);
      expect(offer.gpu_total_ram).toBe(offer.gpu_ram * offer.num_gpus);
      expect(offer.gpu_ram).toBeGreaterThan(8000); // MB
      expect(offer.end_date - offer.start_date).toBeGreaterThan(0);
      expect(offer.dph_total).toBeGreaterThanOrEqual(offer.dph_base);
    }
  });

  it("coerces numbers and booleans sent as strings, by the field's type", async () => {
    const ones = await search({ num_gpus: { eq: "1" }, verified: { eq: "true" }, limit: 1000 });
    expect(ones.length).toBeGreaterThan(0);
    expect(ones.every((o) => o.num_gpus === 1 && o.verified === true)).toBe(true);
    const byMachine = await search({ machine_id: { in: ["1002", "1004"] } });
    expect(byMachine.map((o) => o.machine_id).sort()).toEqual([1002, 1004]);
    const notThose = await search({ machine_id: { notin: ["1002", 1004] }, limit: 1000 });
    expect(notThose.some((o) => o.machine_id === 1002 || o.machine_id === 1004)).toBe(false);
  });

  it("combines several operators on one field, and string filters with in", async () => {
    const mid = await search({ gpu_ram: { gte: 24000, lte: 49140 }, limit: 1000 });
    expect(mid.length).toBeGreaterThan(0);
    expect(mid.every((o) => o.gpu_ram >= 24000 && o.gpu_ram <= 49140)).toBe(true);
    const models = await search({ gpu_name: { in: ["RTX 4090", "H100 SXM"] }, limit: 1000 });
    expect(new Set(models.map((o) => o.gpu_name))).toEqual(new Set(["RTX 4090", "H100 SXM"]));
    const cheap = await search({ dph_total: { lt: 0.5 }, reliability: { gt: "0.95" }, limit: 1000 });
    expect(cheap.every((o) => o.dph_total < 0.5 && o.reliability > 0.95)).toBe(true);
    const notVerified = await search({ verified: { neq: true }, limit: 1000 });
    expect(notVerified.every((o) => o.verified === false)).toBe(true);
  });

  it("geolocation matches a location by its full text or by its two-letter country code, with eq, neq, in, notin", async () => {
    const all = await search({ limit: 1000, order: [["id", "asc"]] });
    const country = (o: Record<string, any>) => o.geolocation.split(",").pop().trim();
    expect(all.some((o) => country(o) === "US")).toBe(true);
    const cases: [Record<string, unknown>, (o: Record<string, any>) => boolean][] = [
      [{ in: ["US"] }, (o) => country(o) === "US"],
      [{ in: ["US", "CA"] }, (o) => ["US", "CA"].includes(country(o))],
      [{ notin: ["US"] }, (o) => country(o) !== "US"],
      [{ eq: "DE" }, (o) => country(o) === "DE"],
      [{ neq: "DE" }, (o) => country(o) !== "DE"],
      [{ eq: "Texas, US" }, (o) => o.geolocation === "Texas, US"],
      [{ in: ["Texas, US", "CA"] }, (o) => o.geolocation === "Texas, US" || country(o) === "CA"],
      [{ notin: ["Texas, US"] }, (o) => o.geolocation !== "Texas, US"],
      [{ eq: "Texas" }, () => false],
    ];
    for (const [filter, expected] of cases) {
      const found = await search({ geolocation: filter, limit: 1000, order: [["id", "asc"]] });
      expect(found.map((o) => o.id)).toEqual(all.filter(expected).map((o) => o.id));
    }
  });

  it("ignores unknown filter fields and accepts the default filters clients send", async () => {
    const all = await search({ limit: 1000 });
    const withUnknown = await search({ no_such_field: { eq: 3 }, limit: 1000 });
    expect(withUnknown).toHaveLength(all.length);
    const defaults = await search({ verified: { eq: true }, external: { eq: false }, rentable: { eq: true }, order: [["score", "desc"]], type: "on-demand", allocated_storage: 50, limit: 5 });
    expect(defaults).toHaveLength(5);
    expect(defaults.every((o) => o.disk_space >= 50)).toBe(true);
  });

  it("orders on any numeric field, both directions, with several keys", async () => {
    for (const field of ["dph_total", "score", "dlperf_per_dphtotal", "gpu_ram", "inet_down"]) {
      const asc = (await search({ order: [[field, "asc"]], limit: 1000 })).map((o) => o[field]);
      const desc = (await search({ order: [[field, "desc"]], limit: 1000 })).map((o) => o[field]);
      expect(asc).toEqual([...asc].sort((a, b) => a - b));
      expect(desc).toEqual([...desc].sort((a, b) => b - a));
    }
    const two = await search({ order: [["num_gpus", "desc"], ["dph_total", "asc"]], limit: 1000 });
    for (let i = 1; i < two.length; i++) {
      const [a, b] = [two[i - 1], two[i]];
      expect(a.num_gpus > b.num_gpus || (a.num_gpus === b.num_gpus && a.dph_total <= b.dph_total)).toBe(true);
    }
  });

  it("refuses an order on a field that is not numeric, with 400", async () => {
    const res = await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { order: [["gpu_name", "asc"]] } });
    expect(res.status).toBe(400);
    expect(res.body.msg).toMatch(/gpu_name/);
  });

  it("limit caps the results; the default is 64", async () => {
    expect(await search({ limit: 3 })).toHaveLength(3);
    expect(await search({ limit: "7" })).toHaveLength(7);
    expect(await search({})).toHaveLength(64);
  });

  it("type: on-demand and ondemand are the fixed price; bid shows interruptible prices; reserved is discounted", async () => {
    const q = { limit: 1000, order: [["id", "asc"]] };
    const onDemand = await search({ ...q, type: "on-demand" });
    expect(await search({ ...q, type: "ondemand" })).toEqual(onDemand);
    expect(await search(q)).toEqual(onDemand);
    const bids = await search({ ...q, type: "bid" });
    expect(bids.length).toBeLessThan(onDemand.length); // on-demand-only offers have no min_bid
    const byId = new Map(onDemand.map((o) => [o.id, o]));
    for (const bid of bids) {
      const listed = byId.get(bid.id)!;
      expect(bid.is_bid).toBe(true);
      expect(typeof bid.min_bid).toBe("number");
      expect(bid.dph_base).toBe(bid.min_bid);
      expect(bid.dph_total).toBe(bid.min_bid);
      expect(bid.dph_total).toBeLessThan(listed.dph_total);
    }
    expect(onDemand.filter((o) => o.min_bid === null).every((o) => !bids.some((b) => b.id === o.id))).toBe(true);
    const reserved = await search({ ...q, type: "reserved" });
    expect(reserved[0].dph_total).toBeCloseTo(onDemand[0].dph_total * 0.8, 3);
  });

  it("a rented offer leaves the market and comes back when its instance is destroyed", async () => {
    const [offer] = await search({ order: [["dph_total", "asc"]], limit: 1 });
    const created = await http(emu.url, "PUT", `/api/v0/asks/${offer.id}/`, { key: emu.apiKey, body: { image: "ubuntu" } });
    expect(created.status).toBe(200);
    expect((await search({ id: { eq: offer.id } }))).toHaveLength(0);
    await http(emu.url, "DELETE", `/api/v0/instances/${created.body.new_contract}/`, { key: emu.apiKey, body: {} });
    expect((await search({ id: { eq: offer.id } }))).toHaveLength(1);
  });

  it("the SDK's searchOffers validates the same offers", async () => {
    const offers = await emu.client().offers.search({ filters: { num_gpus: { gte: 2 } }, order: [["dph_total", "asc"]], type: "bid", limit: 5 });
    expect(offers).toHaveLength(5);
    expect(offers.every((o) => o.is_bid && o.num_gpus >= 2)).toBe(true);
  });
});
