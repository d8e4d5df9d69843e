import { emulator, http, TestEmulator } from "../helpers/emulator";
import { HOURS_PER_MONTH } from "../../emulator/domain/catalogue";

const OFFER_FIELDS: Record<string, string> = {
  ask_contract_id: "number", disk_space: "number", inet_up: "number", inet_down: "number", reliability2: "number",
  verified: "boolean", geolocation: "string", nw_disk_avg_bw: "number", nw_disk_max_bw: "number", nw_disk_min_bw: "number",
  start_date: "number", end_date: "number", storage_cost: "number", storage_cost_total: "number",
};

/** Spec: Network volume offer, Network volume offer search, volume_info; docs/service-facts.md#paths-beyond-the-spec: the volume endpoints. */
describe("volumes", () => {
  let emu: TestEmulator;
  const call = (method: string, path: string, body?: unknown, key = emu.apiKey) => http(emu.url, method, path, { key, body });
  const searchNetwork = async (q: Record<string, unknown>) => {
    const res = await call("POST", "/api/v0/network_volumes/search/", { q });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    return res.body.offers as any[];
  };
  const instanceOffer = async () => (await call("POST", "/api/v0/bundles/", { order: [["dph_total", "asc"]], limit: 1 })).body.offers[0];
  /** Rents a network volume and finds its id by its name (the answer names the volume, not its id). */
  let named = 0;
  const rentNetwork = async (offerId: number, size: number, key = emu.apiKey): Promise<number> => {
    const name = `vol-${++named}`;
    const res = await call("PUT", "/api/v0/network_volumes/", { id: offerId, size, name }, key);
    expect(res.body).toEqual({ success: true, volume_name: name, volume_size: size });
    return (await call("GET", "/api/v0/volumes?type=network_volume", undefined, key)).body.volumes.find((v: any) => v.name === name).id;
  };

  beforeEach(async () => {
    emu = await emulator();
  });
  afterEach(() => emu.close());

  describe("network volume offer search", () => {
    it("answers {success, offers} with every field of the network volume offer table", async () => {
      const offers = await searchNetwork({});
      expect(offers.length).toBeGreaterThan(10);
      for (const offer of offers) {
        for (const [field, type] of Object.entries(OFFER_FIELDS)) expect(typeof offer[field]).toBe(type);
        expect(Number.isInteger(offer.nw_disk_avg_bw)).toBe(true);
        expect(offer.nw_disk_min_bw).toBeLessThanOrEqual(offer.nw_disk_avg_bw);
        expect(offer.nw_disk_max_bw).toBeGreaterThanOrEqual(offer.nw_disk_avg_bw);
        expect(offer.storage_cost_total).toBeCloseTo((offer.storage_cost * offer.disk_space) / 730, 5);
        expect(offer.reliability2).toBeLessThanOrEqual(1);
      }
    });

    it("filters on every key of q, with coercion", async () => {
      const all = await searchNetwork({ limit: 1000 });
      const country = (o: any) => o.geolocation.split(",").pop().trim();
      const cases: [Record<string, unknown>, (o: any) => boolean][] = [
        [{ verified: { eq: "true" } }, (o) => o.verified],
        [{ reliability2: { gte: 0.95 } }, (o) => o.reliability2 >= 0.95],
        [{ inet_down: { gt: "3000" } }, (o) => o.inet_down > 3000],
        [{ inet_up: { lte: 5000 } }, (o) => o.inet_up <= 5000],
        [{ geolocation: { in: ["US", "CA"] } }, (o) => ["US", "CA"].includes(country(o))],
        [{ geolocation: { notin: ["US"] } }, (o) => country(o) !== "US"],
        // The full text matches too, as in offer search (one mechanism for both).
        [{ geolocation: { eq: all[0].geolocation } }, (o) => o.geolocation === all[0].geolocation],
        [{ geolocation: { in: [all[0].geolocation, "CA"] } }, (o) => o.geolocation === all[0].geolocation || country(o) === "CA"],
        [{ disk_bw: { gte: 2000 } }, (o) => o.nw_disk_avg_bw >= 2000],
        [{ duration: { gte: 90 * 86400 } }, (o) => o.end_date - o.start_date >= 90 * 86400],
        [{ storage_cost: { lt: 0.1 } }, (o) => o.storage_cost < 0.1],
        [{ storage_cost: { gte: 0.05, lte: 0.1 }, verified: { eq: true } }, (o) => o.storage_cost >= 0.05 && o.storage_cost <= 0.1 && o.verified],
        [{ unknown_field: { eq: 1 } }, () => true],
      ];
      for (const [q, expected] of cases) {
        const found = await searchNetwork({ ...q, limit: 1000 });
        expect(found.map((o) => o.ask_contract_id).sort()).toEqual(all.filter(expected).map((o) => o.ask_contract_id).sort());
      }
    });

    it("orders and limits", async () => {
      const asc = (await searchNetwork({ order: [["storage_cost", "asc"]] })).map((o) => o.storage_cost);
      expect(asc).toEqual([...asc].sort((a, b) => a - b));
      const desc = (await searchNetwork({ order: [["reliability2", "desc"]] })).map((o) => o.reliability2);
      expect(desc).toEqual([...desc].sort((a, b) => b - a));
      expect(await searchNetwork({ limit: 3 })).toHaveLength(3);
    });

    it("refuses a bad q with 400 {success: false, error, msg}", async () => {
      const res = await call("POST", "/api/v0/network_volumes/search/", { q: { storage_cost: { lt: "cheap" } } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: expect.any(String), msg: expect.stringMatching(/storage_cost/) });
    });
  });

  it("local volume offer search: the disks of the machines on the market, same shape", async () => {
    const res = await call("POST", "/api/v0/volumes/search/", { q: { disk_space: { gte: 1000 }, order: [["disk_space", "desc"]], limit: 5 } });
    expect(res.status).toBe(200);
    expect(res.body.offers).toHaveLength(5);
    for (const offer of res.body.offers) {
      for (const [field, type] of Object.entries(OFFER_FIELDS)) expect(typeof offer[field]).toBe(type);
      expect(offer.disk_space).toBeGreaterThanOrEqual(1000);
    }
    const listed = (await call("POST", "/api/v0/bundles/", { id: { eq: res.body.offers[0].ask_contract_id } })).body.offers[0];
    expect(listed.disk_space).toBe(res.body.offers[0].disk_space);
  });

  describe("network volumes: create, list, delete", () => {
    it("creates from an offer, takes its space, lists by type, deletes and gives the space back", async () => {
      const [offer] = await searchNetwork({ limit: 1 });
      // The vendor's answer: the volume's name and size, no id (a volume without a name gets one).
      const res = await call("PUT", "/api/v0/network_volumes/", { id: offer.ask_contract_id, size: 50 });
      expect(res).toMatchObject({ status: 200, body: { success: true, volume_name: expect.any(String), volume_size: 50 } });
      expect(Object.keys(res.body).sort()).toEqual(["success", "volume_name", "volume_size"]);
      const [volume] = (await call("GET", "/api/v0/volumes?type=network_volume")).body.volumes;
      expect(volume).toMatchObject({ name: res.body.volume_name, label: res.body.volume_name, type: "network_volume", disk_space: 50, ask_contract_id: offer.ask_contract_id, status: "available", instances: [] });
      const after = (await searchNetwork({ ask_contract_id: { eq: offer.ask_contract_id } }))[0];
      expect(after.disk_space).toBe(offer.disk_space - 50);

      expect((await call("GET", "/api/v0/volumes?type=network_volume")).body.volumes).toHaveLength(1);
      expect((await call("GET", "/api/v0/volumes?type=local_volume")).body.volumes).toHaveLength(0);
      expect((await call("GET", "/api/v0/volumes?type=all_volume")).body.volumes).toHaveLength(1);
      expect((await call("GET", "/api/v0/volumes")).body.volumes).toHaveLength(1);

      expect(await call("DELETE", `/api/v0/volumes/?id=${volume.id}`, {})).toMatchObject({ status: 200, body: { success: true } });
      expect((await call("GET", "/api/v0/volumes")).body.volumes).toHaveLength(0);
      expect((await searchNetwork({ ask_contract_id: { eq: offer.ask_contract_id } }))[0].disk_space).toBe(offer.disk_space);
      expect((await call("DELETE", `/api/v0/volumes/?id=${volume.id}`, {})).status).toBe(404);
    });

    it("deletes by the id in the body (the vendor's form), in the query (the public client's), or both when they agree", async () => {
      const [offer] = await searchNetwork({ limit: 1 });
      const make = async () => {
        await call("PUT", "/api/v0/network_volumes/", { id: offer.ask_contract_id, size: 1 });
        const volumes = (await call("GET", "/api/v0/volumes?type=network_volume")).body.volumes;
        return Math.max(...volumes.map((v: { id: number }) => v.id));
      };
      const [first, second, third] = [await make(), await make(), await make()];
      expect(await call("DELETE", "/api/v0/volumes/", { id: first })).toMatchObject({ status: 200, body: { success: true } });
      expect(await call("DELETE", `/api/v0/volumes/?id=${second}`, {})).toMatchObject({ status: 200 });
      expect(await call("DELETE", `/api/v0/volumes/?id=${third}`, { id: second })).toMatchObject({ status: 400, body: { error: "invalid_args" } });
      expect(await call("DELETE", "/api/v0/volumes/", {})).toMatchObject({ status: 400, body: { error: "invalid_args" } });
      expect(await call("DELETE", `/api/v0/volumes/?id=${third}`, { id: third })).toMatchObject({ status: 200 });
      expect((await call("GET", "/api/v0/volumes?type=network_volume")).body.volumes).toEqual([]);
    });

    it("refuses a size beyond the offer's space, and an unknown offer", async () => {
      const [offer] = await searchNetwork({ limit: 1 });
      expect(await call("PUT", "/api/v0/network_volumes/", { id: offer.ask_contract_id, size: offer.disk_space + 1 })).toMatchObject({ status: 400, body: { error: "invalid_size" } });
      expect(await call("PUT", "/api/v0/network_volumes/", { id: 1, size: 1 })).toMatchObject({ status: 404, body: { error: "no_such_ask" } });
    });

    it("another user's volumes are invisible and cannot be deleted", async () => {
      const [offer] = await searchNetwork({ limit: 1 });
      const id = await rentNetwork(offer.ask_contract_id, 5);
      const user = emu.marketplace.accounts.addUser({ email: "other@gpu-rental.test" });
      const key = emu.marketplace.accounts.issueKey(user.id).key;
      expect((await call("GET", "/api/v0/volumes", undefined, key)).body.volumes).toHaveLength(0);
      expect((await call("DELETE", `/api/v0/volumes/?id=${id}`, {}, key)).status).toBe(404);
    });

    it("checks the permission categories: search misc, create/delete instance_write, list instance_read", async () => {
      const { accounts, seededUser } = emu.marketplace;
      const keyWith = (...cats: string[]) => accounts.issueKey(seededUser.id, { permissions: { api: Object.fromEntries(cats.map((c) => [c, {}])) } }).key;
      const misc = keyWith("misc");
      const reader = keyWith("instance_read");
      expect((await call("POST", "/api/v0/network_volumes/search/", { q: {} }, misc)).status).toBe(200);
      expect((await call("POST", "/api/v0/volumes/search/", { q: {} }, reader)).status).toBe(403);
      expect((await call("PUT", "/api/v0/network_volumes/", { id: 70000, size: 1 }, reader)).status).toBe(403);
      expect((await call("GET", "/api/v0/volumes", undefined, reader)).status).toBe(200);
      expect((await call("GET", "/api/v0/volumes", undefined, misc)).status).toBe(403);
      expect((await call("DELETE", "/api/v0/volumes/?id=1", {}, reader)).status).toBe(403);
    });
  });

  describe("volume_info at instance creation", () => {
    it("creates a network volume from a volume offer with size, mounted at mount_path; it outlives the instance", async () => {
      const [volumeOffer] = await searchNetwork({ limit: 1 });
      const offer = await instanceOffer();
      const res = await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu", volume_info: { create_new: true, volume_id: volumeOffer.ask_contract_id, size: 20, mount_path: "/data" } });
      expect(res.status).toBe(200);
      const [volume] = (await call("GET", "/api/v0/volumes")).body.volumes;
      expect(volume).toMatchObject({ type: "network_volume", disk_space: 20, status: "in_use", instances: [res.body.new_contract] });
      const instance = (await call("GET", `/api/v0/instances/${res.body.new_contract}/`)).body.instances;
      expect(instance.volume_info).toEqual({ volume_id: volume.id, mount_path: "/data" });
      expect((await call("DELETE", `/api/v0/volumes/?id=${volume.id}`, {})).body.error).toBe("volume_in_use");
      await call("DELETE", `/api/v0/instances/${res.body.new_contract}/`, {});
      expect((await call("GET", "/api/v0/volumes")).body.volumes[0]).toMatchObject({ status: "available", instances: [] });
    });

    it("links an existing volume of yours; a network volume may serve several instances", async () => {
      const [volumeOffer] = await searchNetwork({ limit: 1 });
      const volumeId = await rentNetwork(volumeOffer.ask_contract_id, 10);
      const ids: number[] = [];
      for (let i = 0; i < 2; i++) {
        const res = await call("PUT", `/api/v0/asks/${(await instanceOffer()).id}/`, { image: "ubuntu", volume_info: { create_new: false, volume_id: volumeId, mount_path: "/shared" } });
        expect(res.status).toBe(200);
        ids.push(res.body.new_contract);
      }
      expect((await call("GET", "/api/v0/volumes")).body.volumes[0].instances).toEqual(ids);
    });

    it("linking a volume that does not exist or is not yours is 400, and nothing is rented", async () => {
      const [volumeOffer] = await searchNetwork({ limit: 1 });
      const user = emu.marketplace.accounts.addUser({ email: "other@gpu-rental.test" });
      const theirs = emu.marketplace.volumes.createNetwork(user.id, volumeOffer.ask_contract_id, 5).id;
      const offer = await instanceOffer();
      for (const volumeId of [123, theirs]) {
        const res = await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu", volume_info: { create_new: false, volume_id: volumeId, mount_path: "/d" } });
        expect(res).toMatchObject({ status: 400, body: { error: "no_such_volume", msg: expect.stringMatching(/not yours/) } });
      }
      expect((await instanceOffer()).id).toBe(offer.id);
      expect((await call("GET", "/api/v1/instances/")).body.instances).toHaveLength(0);
    });

    it("creates a local volume on the instance's own offer; it links again only on that machine", async () => {
      const offer = await instanceOffer();
      const res = await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu", volume_info: { create_new: true, volume_id: offer.id, size: 10, mount_path: "/local" } });
      expect(res.status).toBe(200);
      const [volume] = (await call("GET", "/api/v0/volumes?type=local_volume")).body.volumes;
      expect(volume).toMatchObject({ type: "local_volume", machine_id: offer.machine_id, disk_space: 10 });
      const elsewhere = await instanceOffer();
      const link = { image: "ubuntu", volume_info: { create_new: false, volume_id: volume.id, mount_path: "/local" } };
      expect((await call("PUT", `/api/v0/asks/${elsewhere.id}/`, link)).body.error).toBe("volume_wrong_machine");
      await call("DELETE", `/api/v0/instances/${res.body.new_contract}/`, {});
      expect((await call("PUT", `/api/v0/asks/${offer.id}/`, link)).status).toBe(200);
    });

    it("mounts volumes by -v V.<id>:<path> in env: a local one only on its machine, none of another's; a refusal rents nothing", async () => {
      const offer = await instanceOffer();
      const local = (await call("PUT", "/api/v0/volumes/", { id: offer.id, size: 4 })).body.id;
      const [volumeOffer] = await searchNetwork({ limit: 1 });
      const network = await rentNetwork(volumeOffer.ask_contract_id, 3);
      const env = { [`-v V.${local}:/data`]: "1", [`-v V.${network}:/shared`]: "1", HF_HOME: "/data/hf" };
      const res = await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu", env });
      expect(res.status).toBe(200);
      expect(emu.marketplace.instances.all().find((i) => i.id === res.body.new_contract)?.mounts).toEqual([{ volumeId: local, path: "/data" }, { volumeId: network, path: "/shared" }]);
      const listed = (await call("GET", "/api/v0/volumes")).body.volumes;
      expect(listed.map((v: { id: number; instances: number[] }) => [v.id, v.instances])).toEqual(expect.arrayContaining([[local, [res.body.new_contract]], [network, [res.body.new_contract]]]));
      const elsewhere = await instanceOffer();
      for (const [mount, error] of [[`-v V.${local}:/data`, "volume_wrong_machine"], ["-v V.123:/data", "no_such_volume"], [`-v V.${network}:/data/../../etc`, "invalid_args"]]) {
        const refused = await call("PUT", `/api/v0/asks/${elsewhere.id}/`, { image: "ubuntu", env: { [`-v V.${network}:/shared`]: "1", [mount]: "1" } });
        expect(refused).toMatchObject({ status: 400, body: { error } });
      }
      expect((await instanceOffer()).id).toBe(elsewhere.id);
      expect((await call("GET", "/api/v0/volumes")).body.volumes.find((v: { id: number }) => v.id === network).instances).toEqual([res.body.new_contract]);
    });

    it("bills a volume's storage by the hour, attached or not, as a charge of its own, until it is deleted", async () => {
      const offer = await instanceOffer();
      const volume = (await call("PUT", "/api/v0/volumes/", { id: offer.id, size: 10 })).body.id;
      const before = (await call("GET", "/api/v0/users/current/")).body.credit;
      emu.marketplace.clock.advance(3_600_000);
      const charges = (await call("GET", "/api/v0/charges/")).body.results;
      const hourly = (offer.storage_cost * 10) / HOURS_PER_MONTH;
      expect(charges).toEqual([expect.objectContaining({ type: "volume", source: String(volume), metadata: { volume_id: volume } })]);
      expect(charges[0].amount).toBeCloseTo(hourly, 6);
      expect((await call("GET", "/api/v0/users/current/")).body.credit).toBeCloseTo(before - hourly, 6);
      await call("DELETE", `/api/v0/volumes/?id=${volume}`, {});
      emu.marketplace.clock.advance(3_600_000);
      expect((await call("GET", "/api/v0/charges/")).body.results[0].amount).toBeCloseTo(hourly, 6);
    });

    it("create_new needs size and a volume offer id", async () => {
      const offer = await instanceOffer();
      const noSize = await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu", volume_info: { create_new: true, volume_id: 70000, mount_path: "/d" } });
      expect(noSize).toMatchObject({ status: 400, body: { msg: expect.stringMatching(/size/) } });
      const badOffer = await call("PUT", `/api/v0/asks/${offer.id}/`, { image: "ubuntu", volume_info: { create_new: true, volume_id: 5, size: 1, mount_path: "/d" } });
      expect(badOffer).toMatchObject({ status: 400, body: { error: "no_such_volume_offer" } });
    });
  });

  it("the SDK functions cover every volume endpoint", async () => {
    const client = emu.client();
    const [offer] = await client.volumes.searchNetworkOffers({ verified: { eq: true }, order: [["storage_cost", "asc"]], limit: 1 });
    expect(offer.verified).toBe(true);
    expect(await client.volumes.searchLocalOffers({ limit: 2 })).toHaveLength(2);
    const volume = await client.volumes.createNetwork({ offerId: offer.ask_contract_id, size: 8, name: "data" });
    expect(volume).toMatchObject({ name: "data", disk_space: 8 });
    expect(await client.volumes.list("network_volume")).toHaveLength(1);
    await client.volumes.delete(volume.id);
    expect(await client.volumes.list()).toHaveLength(0);
  });
});
