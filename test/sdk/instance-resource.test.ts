import { INSTANCE, PARTIAL_OUTPUT, PartialCreationError, direct } from "../../provider/lifecycle";
import { diffInstanceSpec, offerKept } from "../../provider/lifecycle/instance";
import { KEPT_OFFER_FIELDS } from "../../provider/lifecycle/rented-offer";
import { emulator, TestEmulator } from "../helpers/emulator";

const Instance = direct(INSTANCE);

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const base = { gpuModel: "RTX 4090", image: "pytorch/pytorch", label: "a" };

describe("diffInstanceSpec", () => {
  it("changes label and target state in place", () => {
    expect(diffInstanceSpec(base, { ...base, label: "b", targetState: "stopped" })).toEqual({
      changes: true,
      updates: ["label", "targetState"],
      replaces: [],
      deleteBeforeReplace: false,
    });
  });

  it("changes the bid in place", () => {
    const bid = { ...base, offerType: "bid", price: 0.5 };
    expect(diffInstanceSpec(bid, { ...bid, price: 0.6 })).toMatchObject({ changes: true, updates: ["price"], replaces: [] });
    // A lower limit is a lower bid, sent in place, while the offer rented still meets the criteria.
    const capped = { ...base, offerType: "bid", maxPricePerHour: 0.5, rentedOffer: { id: 1, gpu_name: "RTX 4090", num_gpus: 1, min_bid: 0.2, dph_total: 0.2, direct_port_count: 10 }, rentedOfferId: 1 };
    expect(diffInstanceSpec(capped, { ...capped, maxPricePerHour: 0.3 })).toMatchObject({ updates: ["maxPricePerHour"], replaces: [] });
  });

  it("replaces for anything the API cannot change on a live instance", () => {
    for (const change of [{ image: "other" }, { disk: 64 }, { env: { A: "1" } }, { onstart: "x" }, { runtype: "jupyter_direct" },
      { gpuModel: "H100 SXM" }, { gpuCount: 2 }, { filters: { reliability: { gte: 0.99 } } }, { maxPricePerHour: 1 }, { offerType: "bid" }]) {
      const diff = diffInstanceSpec(base, { ...base, ...change });
      expect(diff.replaces).toEqual(Object.keys(change));
      expect(diff.updates).toEqual([]);
    }
  });

  it("sees no change in writing a default explicitly, in key order, or in outputs", () => {
    const olds = { ...base, instanceId: 5, sshHost: "h", rentedOfferId: 10001, env: { A: "1", B: "2" } };
    const news = { ...base, disk: 8, runtype: "ssh_direct", targetState: "running", env: { B: "2", A: "1" } };
    expect(diffInstanceSpec(olds, news)).toMatchObject({ changes: false, replaces: [], updates: [] });
  });

  it("records new criteria in place while the offer rented still satisfies them, and replaces when it does not", () => {
    const rentedOffer = { id: 10001, gpu_name: "RTX 4090", num_gpus: 2, reliability: 0.995, dph_total: 0.8, direct_port_count: 10 };
    const olds = { ...base, rentedOffer, rentedOfferId: 10001 };
    for (const change of [{ gpuCount: 2 }, { filters: { reliability: { gte: 0.99 } } }, { maxPricePerHour: 1 }, { onBootFailure: "replace" }]) {
      expect(diffInstanceSpec(olds, { ...base, ...change })).toMatchObject({ replaces: [], updates: Object.keys(change) });
    }
    for (const change of [{ gpuCount: 4 }, { filters: { reliability: { gte: 0.999 } } }, { maxPricePerHour: 0.5 }, { offerType: "bid" }]) {
      expect(diffInstanceSpec(olds, { ...base, ...change })).toMatchObject({ replaces: Object.keys(change), updates: [] });
    }
  });

  it("keeps of the offer rented its id and the fields criteria compare, and diffs a whole offer of an earlier state the same", () => {
    // An offer as the search shows it (an earlier version kept all of it in the state).
    const whole = {
      id: 10001, ask_contract_id: 10001, bundle_id: 5001, gpu_name: "RTX 4090", num_gpus: 2, gpu_ram: 24564, gpu_frac: 1, cpu_cores: 32,
      cpu_ram: 128000, cpu_name: "AMD EPYC", disk_space: 900, inet_up: 800, inet_down: 900, reliability: 0.995, dlperf: 40, score: 120,
      cuda_max_good: 12.4, driver_version: "550.1", geolocation: "Texas, US", verification: "verified", verified: true, rentable: true,
      dph_base: 0.78, dph_total: 0.8, min_bid: 0.4, storage_cost: 0.15, direct_port_count: 10, start_date: 1, end_date: 2, duration: 1,
    };
    const filtered = { ...base, filters: { cuda_max_good: { gte: 12 } } };
    const kept = offerKept(whole, filtered)!;
    expect(Object.keys(kept).sort()).toEqual([...KEPT_OFFER_FIELDS, "cuda_max_good"].sort());
    expect(kept).toMatchObject({ id: 10001, gpu_name: "RTX 4090", num_gpus: 2, dph_total: 0.8, min_bid: 0.4, cuda_max_good: 12.4 });
    expect(offerKept(whole, base)).not.toHaveProperty("cuda_max_good");
    expect(offerKept(null, base)).toBeNull();
    // Trimming a whole offer again, or a kept one, changes nothing more.
    expect(offerKept(kept, filtered)).toEqual(kept);

    const lean = { ...filtered, rentedOffer: kept, rentedOfferId: 10001 };
    const earlier = { ...filtered, rentedOffer: whole, rentedOfferId: 10001 };
    for (const olds of [lean, earlier]) {
      // Criteria the offer still meets, on fields kept: recorded in place, from either state.
      for (const change of [{ gpuCount: 2 }, { filters: { cuda_max_good: { gte: 12.2 }, reliability: { gte: 0.99 }, gpu_ram: { gte: 24000 } } }, { maxPricePerHour: 1 }]) {
        expect(diffInstanceSpec(olds, { ...filtered, ...change })).toMatchObject({ replaces: [], updates: Object.keys(change) });
      }
      for (const change of [{ gpuCount: 4 }, { filters: { cuda_max_good: { gte: 12.5 } } }, { maxPricePerHour: 0.5 }]) {
        expect(diffInstanceSpec(olds, { ...filtered, ...change })).toMatchObject({ replaces: Object.keys(change), updates: [] });
      }
    }
    // A new filter on a field the lean state did not keep cannot be checked there: it replaces (the earlier state's whole offer still tells).
    const onCores = { ...filtered, filters: { ...filtered.filters, cpu_cores: { gte: 16 } } };
    expect(diffInstanceSpec(lean, onCores)).toMatchObject({ replaces: ["filters"], updates: [] });
    expect(diffInstanceSpec(earlier, onCores)).toMatchObject({ replaces: [], updates: ["filters"] });
  });

  it("counts an unknown value (preview) as a change", () => {
    expect(diffInstanceSpec(base, { ...base, image: UNKNOWN }, UNKNOWN).replaces).toEqual(["image"]);
  });

  it("deletes before replacing a pinned offer, which can be rented only once", () => {
    const pinned = { offerId: 10001, image: "a" };
    expect(diffInstanceSpec(pinned, { ...pinned, image: "b" }).deleteBeforeReplace).toBe(true);
  });
});

describe("checkInstanceInputs", () => {
  it("names each bad input", () => {
    const { failures } = Instance.check({ image: "", disk: -1, runtype: "telnet" });
    expect(failures.map((f) => f.property).sort()).toEqual(["disk", "image", "runtype"]);
  });

  it("refuses offerId together with search criteria", () => {
    expect(Instance.check({ offerId: 1, gpuModel: "x", image: "i" }).failures[0]).toMatchObject({ property: "offerId" });
  });

  it("leaves unknown inputs to be checked when they are known", () => {
    expect(Instance.check({ image: UNKNOWN, disk: 16 }, UNKNOWN).failures).toEqual([]);
    // Deep inside an object too: a volume whose id comes from a NetworkVolume not created yet.
    expect(Instance.check({ image: "i", volume: { volumeId: UNKNOWN, mountPath: "/d" } }, UNKNOWN).failures).toEqual([]);
    expect(Instance.check({ image: "i", volume: { volumeId: "7", mountPath: "/d" } }, UNKNOWN).failures[0]).toMatchObject({ property: "volume" });
  });
});

describe("diffInstanceSpec on criteria", () => {
  it("sees the same search written two ways as no change", () => {
    const olds = { image: "i", gpuModel: "RTX 4090", offerType: "ondemand" };
    expect(diffInstanceSpec(olds, { image: "i", filters: { gpu_name: { eq: "RTX 4090" } }, offerType: "on-demand" }).changes).toBe(false);
    expect(diffInstanceSpec(olds, { image: "i", gpuModel: "RTX 4090", order: [["dph_total", "asc"]] }).changes).toBe(false);
    expect(diffInstanceSpec(olds, { image: "i", gpuModel: "RTX 3090" }).replaces).toEqual(["gpuModel"]);
  });
});

describe("instance resource over HTTP", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator({ lifecycle: { provisioningMs: 30_000, loadingMs: 90_000 } });
  });
  afterAll(() => emu.close());
  // Each poll of the SDK moves the emulator's (frozen) clock on, so boots complete without sleeping.
  const options = () => ({ client: emu.client(), wait: { pollMs: 1, onPoll: () => emu.marketplace.clock.advance(20_000) } });

  it("creates, reads, updates in place and destroys", async () => {
    const { id, outs } = await Instance.create(base, options());
    expect(outs).toMatchObject({ ...base, instanceId: Number(id), status: "running", gpuName: "RTX 4090", numGpus: expect.any(Number) });
    expect(outs.sshHost).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(outs.instanceApiKey).toMatch(/^[0-9a-f]{64}$/);

    const read = await Instance.read(id, outs, options());
    expect(read).toMatchObject({ instanceId: Number(id), rentedOfferId: outs.rentedOfferId, label: "a" });

    const updated = await Instance.update(id, outs, { ...base, label: "b", targetState: "stopped" }, options());
    expect(updated).toMatchObject({ instanceId: Number(id), label: "b", status: "exited", targetState: "stopped" });
    expect(emu.marketplace.instances.all().find((i) => i.id === Number(id))).toMatchObject({ label: "b", intended: "stopped" });

    await Instance.delete(id, options());
    expect(await Instance.read(id, outs, options())).toBeNull();
    await Instance.delete(id, options()); // already gone: still fine
  });

  it("bids again in place, and refuses a bid below the offer's minimum before sending it", async () => {
    const spec = { ...base, gpuModel: undefined, offerType: "bid" };
    const { id, outs } = await Instance.create(spec, options());
    const record = () => emu.marketplace.instances.all().find((i) => i.id === Number(id))!;
    const minimum = record().offer.min_bid!;
    const updated = await Instance.update(id, outs, { ...spec, price: minimum * 2 }, options());
    expect(updated).toMatchObject({ instanceId: Number(id), price: minimum * 2, status: "running" });
    expect(record()).toMatchObject({ pricePerHour: minimum * 2, intended: "running" });
    // Said at preview (the diff), and refused by an update all the same.
    expect(() => Instance.diff(updated, { ...spec, price: minimum / 2 })).toThrow(/the bid of [\d.]+ \$\/hour \(price, else maxPricePerHour\) is below the minimum bid of its offer/);
    await expect(Instance.update(id, updated, { ...spec, price: minimum / 2 }, options())).rejects.toThrow(/below the minimum bid of its offer .* Bid at least/);
    expect(record().pricePerHour).toBe(minimum * 2);
    // Without a price the bid is the limit, as at rental: a new limit bids again.
    await Instance.update(id, updated, { ...spec, maxPricePerHour: minimum * 3 }, options());
    expect(record().pricePerHour).toBe(minimum * 3);
    await Instance.delete(id, options());
  });

  it("mounts an existing network volume, or a new one made from a volume offer, and replaces on a change", async () => {
    const client = emu.client();
    const [offer, another] = await client.volumes.searchNetworkOffers({ order: [["storage_cost", "asc"]], limit: 2 });
    const volume = await client.volumes.createNetwork({ offerId: offer.ask_contract_id, size: 20 });
    const linked = await Instance.create({ ...base, volume: { volumeId: volume.id, mountPath: "/data" } }, options());
    expect(emu.marketplace.instances.all().find((i) => i.id === Number(linked.id))!.volume).toEqual({ id: volume.id, mount_path: "/data" });

    const created = await Instance.create({ ...base, volume: { offerId: another.ask_contract_id, size: 10, mountPath: "/scratch" } }, options());
    const mounted = emu.marketplace.instances.all().find((i) => i.id === Number(created.id))!.volume!;
    expect(mounted.mount_path).toBe("/scratch");
    expect((await client.volumes.list()).map((v) => v.id)).toContain(mounted.id);

    expect(diffInstanceSpec(linked.outs, { ...base, volume: { volumeId: volume.id, mountPath: "/other" } }).replaces).toEqual(["volume"]);
    expect(Instance.check({ ...base, volume: { volumeId: 1, offerId: 2, mountPath: "/d" } }).failures[0]).toMatchObject({ property: "volume" });
    expect(Instance.check({ ...base, volume: { offerId: 2, mountPath: "/d" } }).failures[0].reason).toMatch(/size/);
    await Instance.delete(linked.id, options());
    await Instance.delete(created.id, options());
  });

  it("retries the clean-up destroy after a failed boot while the service fails, within its failure budget", async () => {
    const client = emu.client({ retries: 1 });
    const original = client.instances.create;
    let rented = 0;
    client.instances.create = async (offerId, request) => {
      const created = await original(offerId, request);
      rented = created.new_contract;
      emu.marketplace.instances.fail(created.new_contract, "offline");
      emu.faults.add({ path: `/api/v0/instances/${created.new_contract}/`, method: "DELETE", kind: "status", status: 503, times: 5 });
      return created;
    };
    const error = await Instance.create(base, { client, wait: { pollMs: 1 } }).catch((e) => e);
    expect(error.message).toMatch(/is offline/);
    expect(emu.marketplace.instances.all().map((i) => i.id)).not.toContain(rented);
  });

  it("holds an instance it cannot destroy after a failed boot in its error (a partial creation, which the state keeps), naming the sweep", async () => {
    const client = emu.client({ retries: 0 });
    const original = client.instances.create;
    client.instances.create = async (offerId, request) => {
      const created = await original(offerId, request);
      emu.marketplace.instances.fail(created.new_contract, "offline");
      emu.faults.add({ path: `/api/v0/instances/${created.new_contract}/`, method: "DELETE", kind: "status", status: 503, times: 1000 });
      return created;
    };
    const identity = { urn: "urn:pulumi:dev::proj::gpu-rental:index:Instance::a", generation: 0 };
    const error = await Instance.create(base, { client, identity, wait: { pollMs: 1 }, rent: { serviceFailureBudgetMs: 300 } }).catch((e) => e);
    emu.faults.clear();
    expect(error).toBeInstanceOf(PartialCreationError);
    expect(error.message).toMatch(/is offline[\s\S]*could not be destroyed[\s\S]*kept in the stack's state[\s\S]*gpu-rental sweep --token gr[a-z2-7]{8}-[a-z2-7]{10}/);
    expect(error.properties).toMatchObject({ instanceId: Number(error.id), status: "offline", [PARTIAL_OUTPUT]: true });
    await emu.client().instances.destroy(Number(error.id));
  });

  it("drops inputs the program no longer sets from the outputs, so the next diff is clean", async () => {
    const { id, outs } = await Instance.create({ ...base, label: "named", targetState: "stopped" }, options());
    const news = { gpuModel: base.gpuModel, image: base.image };
    const updated = await Instance.update(id, outs, news, options());
    expect(updated).toMatchObject({ label: "", targetState: "running", status: "running" });
    expect(emu.marketplace.instances.all().find((i) => i.id === Number(id))).toMatchObject({ label: "", intended: "running" });
    expect(diffInstanceSpec(updated, news).changes).toBe(false);
    await Instance.delete(id, options());
  });

  it("with onBootFailure: replace, destroys an instance that fails to boot and rents another offer, within maxBootAttempts", async () => {
    const before = emu.marketplace.instances.all().length;
    const client = emu.client();
    const original = client.instances.create;
    let failing = 1;
    client.instances.create = async (offerId, request) => {
      const created = await original(offerId, request);
      if (failing-- > 0) emu.marketplace.instances.fail(created.new_contract, "exited", "image pull failed");
      return created;
    };
    const lines: string[] = [];
    const spec = { ...base, onBootFailure: "replace", maxBootAttempts: 2 };
    const { id, outs } = await Instance.create(spec, { ...options(), client, log: (line) => lines.push(line) });
    expect(lines).toEqual([
      expect.stringMatching(/^offer \d+: rented after/),
      expect.stringMatching(/^instance \d+ on offer (\d+) failed to boot \(.*image pull failed.*\): destroyed, renting another \(2 of 2\)$/),
      expect.stringMatching(/^offer \d+: rented after/),
    ]);
    const firstOffer = Number(/^offer (\d+)/.exec(lines[0])![1]);
    expect(outs.rentedOfferId).not.toBe(firstOffer);
    expect(emu.marketplace.instances.all()).toHaveLength(before + 1);
    await Instance.delete(id, options());

    failing = 2;
    await expect(Instance.create(spec, { client, wait: { pollMs: 1 } })).rejects.toThrow(/exited \(image pull failed\)/);
    expect(emu.marketplace.instances.all()).toHaveLength(before);
  });

  it("destroys an instance that fails to boot instead of leaving it behind", async () => {
    const failFirst = (instanceId: number) => emu.marketplace.instances.fail(instanceId, "exited", "image pull failed");
    const before = emu.marketplace.instances.all().length;
    const client = emu.client();
    const original = client.instances.create;
    client.instances.create = async (offerId, request) => {
      const created = await original(offerId, request);
      failFirst(created.new_contract);
      return created;
    };
    await expect(Instance.create(base, { client, wait: { pollMs: 1 } })).rejects.toThrow(/exited \(image pull failed\)/);
    expect(emu.marketplace.instances.all()).toHaveLength(before);
  });
});
