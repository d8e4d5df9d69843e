import { LOCAL_VOLUME, NETWORK_VOLUME, VolumeInUseError, direct } from "../../provider/lifecycle";
import { emulator, http, TestEmulator } from "../helpers/emulator";

const NetworkVolume = direct(NETWORK_VOLUME);

/** The kind's diff, which is synchronous. */
const diffNetworkVolumeSpec = (olds: Record<string, unknown>, news: Record<string, unknown>, unknown?: unknown) =>
  NETWORK_VOLUME.diff(olds, news, unknown) as { changes: boolean; replaces: string[]; deleteBeforeReplace: boolean };

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const base = { q: { geolocation: { in: ["US"] } }, size: 50, name: "datasets" };

describe("the NetworkVolume diff", () => {
  it("replaces for a new size, name or pin, creating the new volume first", () => {
    for (const change of [{ size: 60 }, { name: "other" }, { offerId: 1 }]) {
      expect(diffNetworkVolumeSpec(base, { ...base, ...change })).toEqual({
        changes: true,
        replaces: Object.keys(change),
        deleteBeforeReplace: false,
      });
    }
  });

  it("keeps the volume for new search criteria, unpinning, or a pin on the offer it came from", () => {
    const kept = { changes: true, replaces: [], deleteBeforeReplace: false };
    expect(diffNetworkVolumeSpec(base, { ...base, q: { verified: { eq: true } } })).toEqual(kept);
    const pinned = { offerId: 70016, size: 50, askContractId: 70016 };
    expect(diffNetworkVolumeSpec(pinned, { size: 50, q: {} })).toEqual(kept);
    expect(diffNetworkVolumeSpec({ size: 50, q: {}, askContractId: 70016 }, { size: 50, offerId: 70016 })).toEqual(kept);
  });

  it("sees no change in outputs, key order or a missing name written as null", () => {
    const olds = { size: 50, q: { a: { eq: 1 }, b: { eq: 2 } }, volumeId: 800001, status: "available" };
    expect(diffNetworkVolumeSpec(olds, { size: 50, name: null, q: { b: { eq: 2 }, a: { eq: 1 } } }).changes).toBe(false);
    expect(diffNetworkVolumeSpec(base, { ...base, size: UNKNOWN }, UNKNOWN).replaces).toEqual(["size"]);
  });
});

describe("checkNetworkVolumeInputs", () => {
  it("names each bad input", () => {
    expect(NetworkVolume.check({ size: -5, name: 3 }).failures.map((f) => f.property).sort()).toEqual(["name", "size"]);
    expect(NetworkVolume.check({ name: "x" }).failures.map((f) => f.property)).toEqual(["size"]);
  });

  it("refuses offerId together with a search", () => {
    expect(NetworkVolume.check({ offerId: 1, q: {}, size: 1 }).failures[0]).toMatchObject({ property: "offerId" });
  });
});

describe("network volume resource over HTTP", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator();
  });
  afterAll(() => emu.close());
  const options = () => ({ client: emu.client() });
  const volumes = () => emu.client().volumes.list("network_volume");

  it("creates on the cheapest matching offer with room, reads and deletes", async () => {
    const offers = await emu.client().volumes.searchNetworkOffers({ geolocation: { in: ["US"] }, disk_space: { gte: 50 }, order: [["storage_cost", "asc"]] });
    const { id, outs } = await NetworkVolume.create(base, options());
    expect(outs).toMatchObject({ ...base, volumeId: Number(id), askContractId: offers[0].ask_contract_id, diskSpace: 50, volumeName: expect.stringMatching(/^datasets-gr-[a-z2-7]{10}$/), status: "available", instances: [] });
    expect(outs.geolocation).toMatch(/US/);
    expect(Object.values(outs)).not.toContain(undefined);

    expect(await NetworkVolume.read(id, outs, options())).toMatchObject({ volumeId: Number(id), diskSpace: 50, name: "datasets" });

    await NetworkVolume.delete(id, options());
    expect(await volumes()).toEqual([]);
    expect(await NetworkVolume.read(id, outs, options())).toBeNull();
    await NetworkVolume.delete(id, options()); // already gone: still fine
  });

  it("takes the space of a pinned offer, named by its creation token when no name is given", async () => {
    const [offer] = await emu.client().volumes.searchNetworkOffers({ order: [["storage_cost", "desc"]], limit: 1 });
    const { id, outs } = await NetworkVolume.create({ offerId: offer.ask_contract_id, size: 10 }, options());
    expect(outs).toMatchObject({ askContractId: offer.ask_contract_id, volumeName: expect.stringMatching(/^gr-[a-z2-7]{10}$/) });
    expect(outs).not.toHaveProperty("name");
    await NetworkVolume.delete(id, options());
  });

  it("refuses to delete a volume an instance uses, naming the instance and what to do", async () => {
    const client = emu.client();
    const { id } = await NetworkVolume.create({ size: 5 }, options());
    const [offer] = await client.offers.search({ limit: 1 });
    const { new_contract } = await client.instances.create(offer.id, {
      image: "busybox",
      volume_info: { create_new: false, volume_id: Number(id), mount_path: "/data" },
    });
    const refusal = NetworkVolume.delete(id, options());
    await expect(refusal).rejects.toBeInstanceOf(VolumeInUseError);
    await expect(refusal).rejects.toThrow(new RegExp(`attached to instance ${new_contract}: destroy that instance first`));
    expect((await volumes()).map((v) => v.id)).toEqual([Number(id)]);

    await client.instances.destroy(new_contract);
    await NetworkVolume.delete(id, options());
    expect(await volumes()).toEqual([]);
  });

  it("says so when no offer has room, and refuses bad input before anything is sent", async () => {
    await expect(NetworkVolume.create({ size: 10_000_000 }, options())).rejects.toThrow(/No network volume offer has 10000000 GB free/);
    await expect(NetworkVolume.create({ size: 0 }, options())).rejects.toThrow(/Invalid NetworkVolume: size/);
    expect(await volumes()).toEqual([]);
  });
});

describe("local volume resource over HTTP", () => {
  const LocalVolume = direct(LOCAL_VOLUME);
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator();
  });
  afterAll(() => emu.close());
  const options = () => ({ client: emu.client() });
  const refuseOnce = (error: string) =>
    http(emu.url, "POST", "/_emulator/faults", { body: { method: "PUT", path: "/api/v0/volumes/", kind: "status", status: 404, error, msg: "The offer is gone." } });

  it("creates on a machine's offer (machineId out), searches again when the offer vanishes, unless it was pinned", async () => {
    await refuseOnce("no_such_ask");
    const { id, outs } = await LocalVolume.create({ size: 5, name: "cache" }, options());
    expect(outs).toMatchObject({ diskSpace: 5, machineId: expect.any(Number), instances: [] });
    await refuseOnce("no_such_ask");
    await expect(LocalVolume.create({ size: 5, offerId: outs.askContractId! }, options())).rejects.toThrow(/no_such_ask|The offer is gone/);
    await LocalVolume.delete(id, options());
    expect(await emu.client().volumes.list("local_volume")).toEqual([]);
  });

  it("says at preview what the service would refuse: an offer gone, a size larger than its offer, no offer with room", async () => {
    const [offer] = await emu.client().volumes.searchLocalOffers({ limit: 1 });
    const refusals = (news: Record<string, unknown>) => LocalVolume.refusals(news, options(), "unknown-marker");
    expect(await refusals({ size: 1, offerId: offer.ask_contract_id })).toEqual([]);
    expect(await refusals({ size: offer.disk_space + 1, offerId: offer.ask_contract_id })).toEqual([{ property: "size", reason: expect.stringMatching(/has [\d.]+ GB free: ask for at most that/) }]);
    expect(await refusals({ size: 1, offerId: 424242 })).toEqual([{ property: "offerId", reason: expect.stringMatching(/not on the market/) }]);
    expect(await refusals({ size: 1e9 })).toEqual([{ property: "size", reason: expect.stringMatching(/No local volume offer has 1000000000 GB free/) }]);
    expect(await refusals({ size: "unknown-marker" })).toEqual([]);
  });
});
