import { Instance as InstanceRecord, resourceToken, stackHoldings, stackTokenPrefix, sweep, tokenOfApiKey, tokenOfInstance, tokenOfVolume } from "../../sdk";
import { API_KEY, configureLifecycle, GPU_FLEET, INSTANCE, NETWORK_VOLUME, PARTIAL_OUTPUT, PartialCreationError, direct } from "../../provider/lifecycle";
import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";

const ApiKey = direct(API_KEY);
const GpuFleet = direct(GPU_FLEET);
const Instance = direct(INSTANCE);
const NetworkVolume = direct(NETWORK_VOLUME);

/**
 * Creations cut off part-way, without the engine (test/package/interrupted.test.ts has the engine and signals):
 * what an interrupted creation answers, what the next creation of the same resource finds, and what a stack's
 * sweep destroys. The emulator's clock is frozen: instances boot only when a poll moves it.
 */
const base = { gpuModel: "RTX 4090", image: "pytorch/pytorch", label: "a" };
const urn = (name: string, stack = "dev") => `urn:pulumi:${stack}::proj::gpu-rental:index:Instance::${name}`;
const identity = (name: string, generation = 0, stack = "dev") => ({ urn: urn(name, stack), generation });

describe("creations cut off part-way", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator({ offers: 200 });
  });
  afterAll(() => emu.close());
  afterEach(async () => {
    emu.faults.clear();
    for (const instance of emu.marketplace.instances.all()) await emu.client().instances.destroy(instance.id);
  });

  const live = () => emu.marketplace.instances.all().map((i) => i.id).sort();
  const boots = { pollMs: 1, onPoll: () => emu.marketplace.clock.advance(1_000) };
  /**
   * Interrupted while the instance boots, whatever the machine's speed: the signal is aborted at the first poll,
   * which never sees it boot (the frozen clock is not moved).
   */
  const atBoot = () => {
    const controller = new AbortController();
    return { signal: controller.signal, wait: { pollMs: 5, onPoll: () => controller.abort() } };
  };
  /** Interrupted as the creation request (PUT /api/v0/asks/{id}/) is sent: the client's create aborts the signal. */
  const atCreation = () => {
    const controller = new AbortController();
    const client = emu.client();
    const create = client.instances.create.bind(client.instances);
    client.instances.create = (...args: Parameters<typeof create>) => {
      const sent = create(...args);
      controller.abort();
      return sent;
    };
    return { client, signal: controller.signal, wait: { pollMs: 5 } };
  };

  it("interrupted while the instance boots, answers with a partial creation holding it; the update then waits for it", async () => {
    const error = await Instance.create(base, { client: emu.client(), identity: identity("a"), ...atBoot() }).catch((e) => e);
    expect(error).toBeInstanceOf(PartialCreationError);
    expect(error.message).toMatch(/interrupted before it was running[\s\S]*kept in the stack's state/);
    expect(live()).toEqual([Number(error.id)]);
    expect(error.properties).toMatchObject({ instanceId: Number(error.id), label: "a", [PARTIAL_OUTPUT]: true });
    expect(error.properties.instanceApiKey).toEqual(expect.any(String));

    // The next up: the diff looks at the service (still booting: an update), the update waits and ends the partial state.
    const client = emu.client();
    expect(await Instance.diff(error.properties, base, undefined, { client: () => client })).toMatchObject({ replaces: [], updates: ["status"] });
    const outs = await Instance.update(error.id, error.properties, base, { client, wait: boots });
    expect(outs).toMatchObject({ status: "running", instanceApiKey: error.properties.instanceApiKey });
    expect(outs).not.toHaveProperty(PARTIAL_OUTPUT);
    expect(live()).toEqual([Number(error.id)]);
  });

  it("a partial creation whose instance failed or went away is replaced by the next diff", async () => {
    const error = await Instance.create(base, { client: emu.client(), identity: identity("a"), ...atBoot() }).catch((e) => e);
    const client = emu.client();
    emu.marketplace.instances.fail(Number(error.id), "exited", "image pull failed");
    expect(await Instance.diff(error.properties, base, undefined, { client: () => client })).toMatchObject({ changes: true, replaces: ["status"] });
    await client.instances.destroy(Number(error.id));
    expect(await Instance.diff(error.properties, base, undefined, { client: () => client })).toMatchObject({ replaces: ["status"] });
    // A state that is not a partial creation's is not looked at.
    const { [PARTIAL_OUTPUT]: _marker, ...settled } = error.properties;
    expect(Instance.diff(settled, base, undefined, { client: () => client })).toMatchObject({ changes: false });
  });

  it("interrupted before anything was rented, rents nothing", async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await Instance.create(base, { client: emu.client(), identity: identity("a"), signal: controller.signal }).catch((e) => e);
    expect(error.message).toMatch(/interrupted before anything was made/);
    expect(error).not.toBeInstanceOf(PartialCreationError);
    expect(live()).toEqual([]);
  });

  it("a rental request already sent is given its grace: its answer makes the partial creation", async () => {
    emu.faults.add({ method: "PUT", path: "/api/v0/asks/", kind: "latency", delayMs: 400 });
    const error = await Instance.create(base, { identity: identity("a"), ...atCreation() }).catch((e) => e);
    expect(error).toBeInstanceOf(PartialCreationError);
    expect(live()).toEqual([Number(error.id)]);
  });

  it("a rental request not answered within the grace names its token; the next creation of the resource takes the instance over", async () => {
    emu.faults.add({ method: "PUT", path: "/api/v0/asks/", kind: "latency", delayMs: 500 });
    const error = await Instance.create(base, {
      identity: identity("a"), rent: { interruptGraceMs: 50 }, ...atCreation(),
    }).catch((e) => e);
    const token = resourceToken(identity("a"));
    expect(error.message).toMatch(new RegExp(`may exist, carrying token ${token}[\\s\\S]*next \`pulumi up\`[\\s\\S]*gpu-rental sweep --token ${token}`));
    while (live().length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    const [orphan] = live();

    const { id, outs } = await Instance.create(base, { client: emu.client(), identity: identity("a"), wait: boots });
    expect(Number(id)).toBe(orphan);
    expect(live()).toEqual([orphan]);
    // Taken over: its offer and its key were in the answer that was lost.
    expect(outs).toMatchObject({ status: "running", rentedOfferId: null, instanceApiKey: null });
  });

  describe("what the next creation finds of a cut-off one (as after a SIGKILL: nothing in the state)", () => {
    /** A creation whose outcome the state never learnt: the instance it made, left running. */
    const cutOff = async (spec = base, id = identity("a")) => Number((await Instance.create(spec, { client: emu.client(), identity: id, wait: boots })).id);

    it("takes over the instance rented for the same spec, and rents nothing", async () => {
      const orphan = await cutOff();
      const { id } = await Instance.create(base, { client: emu.client(), identity: identity("a"), wait: boots });
      expect(Number(id)).toBe(orphan);
      expect(live()).toEqual([orphan]);
    });

    it("destroys the one rented for other inputs, and rents anew", async () => {
      const orphan = await cutOff({ ...base, label: "before" });
      const { id } = await Instance.create(base, { client: emu.client(), identity: identity("a"), wait: boots });
      expect(live()).toEqual([Number(id)]);
      expect(Number(id)).not.toBe(orphan);
    });

    it("never takes over another resource's, another stack's, or a replacement's old half", async () => {
      const first = await cutOff();
      const others = [identity("b"), identity("a", 0, "prod"), identity("a", 1)];
      const made = [];
      for (const other of others) made.push(Number((await Instance.create(base, { client: emu.client(), identity: other, wait: boots })).id));
      expect(new Set([first, ...made]).size).toBe(4);
      expect(live()).toEqual([first, ...made].sort());
    });
  });

  it("waits out polls the service fails (500s, resets, 429s) instead of taking them for a failed boot", async () => {
    for (const fault of [{ kind: "status", status: 500 }, { kind: "drop" }, { kind: "status", status: 429 }] as const) {
      emu.faults.add({ method: "GET", path: "/api/v0/instances/", ...fault, times: 6 });
    }
    const client = emu.client({ retries: 0 });
    const { id, outs } = await Instance.create(base, { client, identity: identity("a"), wait: { pollMs: 1, onPoll: boots.onPoll } });
    expect(outs.status).toBe("running");
    expect(live()).toEqual([Number(id)]);
    expect(emu.faults.list()).toEqual([]);
  });

  describe("GpuFleet", () => {
    const fleet = { image: "pytorch/pytorch", gpuCount: 1, labelPrefix: "w", size: 4 };
    const fleetIdentity = (generation = 0) => ({ urn: "urn:pulumi:dev::proj::gpu-rental:index:GpuFleet::w", generation });

    it("interrupted while its members boot, answers with the members it has; the next update completes and waits for them", async () => {
      const error = await GpuFleet.create(fleet, { client: emu.client(), identity: fleetIdentity(), ...atBoot() }).catch((e) => e);
      expect(error).toBeInstanceOf(PartialCreationError);
      expect(error.properties.instanceIds.sort()).toEqual(live());
      expect(error.properties[PARTIAL_OUTPUT]).toBe(true);
      // A member its state lacks (a rental not yet sent at the signal) is rented by the update.
      const partial = { ...error.properties, members: error.properties.members.slice(1), instanceIds: error.properties.instanceIds.slice(1) };
      await emu.client().instances.destroy(error.properties.instanceIds[0]);
      const outs = await GpuFleet.update(error.id, partial, fleet, { client: emu.client(), identity: fleetIdentity(1), wait: boots });
      expect(outs.members.map((m) => [m.index, m.status])).toEqual([[0, "running"], [1, "running"], [2, "running"], [3, "running"]]);
      expect(outs.instanceIds.slice(1)).toEqual(partial.instanceIds);
      expect(live()).toEqual([...outs.instanceIds].sort());
    });

    it("takes over, member by member, what a cut-off creation rented for the same spec", async () => {
      const first = await GpuFleet.create(fleet, { client: emu.client(), identity: fleetIdentity(), wait: boots });
      // The state never learnt of it; the next up creates the fleet again.
      const again = await GpuFleet.create(fleet, { client: emu.client(), identity: fleetIdentity(), wait: boots });
      expect(again.outs.instanceIds).toEqual(first.outs.instanceIds);
      expect(live()).toEqual([...first.outs.instanceIds].sort());
      // A bigger fleet: the four are members 0-3 again, member 4 is rented.
      const bigger = await GpuFleet.create({ ...fleet, size: 5 }, { client: emu.client(), identity: fleetIdentity(), wait: boots });
      expect(bigger.outs.instanceIds.slice(0, 4)).toEqual(first.outs.instanceIds);
      expect(live()).toHaveLength(5);
    });
  });

  it("a network volume and an API key: the next creation takes over the volume made for it, and revokes the key (its value is lost)", async () => {
    const volumeId = identity("v");
    const volumeSpec = { size: 20, name: "data" };
    const first = await NetworkVolume.create(volumeSpec, { client: emu.client(), identity: volumeId });
    const again = await NetworkVolume.create(volumeSpec, { client: emu.client(), identity: volumeId });
    expect(again.id).toBe(first.id);
    const other = await NetworkVolume.create({ ...volumeSpec, size: 30 }, { client: emu.client(), identity: volumeId });
    const volumes = (await emu.client().volumes.list("network_volume")).filter((v) => tokenOfVolume(v) === resourceToken(volumeId));
    expect(volumes.map((v) => String(v.id))).toEqual([other.id]);

    const keyId = identity("k");
    const key = await ApiKey.create({ name: "ci" }, { client: emu.client(), identity: keyId });
    const reissued = await ApiKey.create({ name: "ci" }, { client: emu.client(), identity: keyId });
    const keys = (await emu.client().apiKeys.list()).filter((k) => tokenOfApiKey(k) === resourceToken(keyId));
    expect(keys.map((k) => String(k.id))).toEqual([reissued.id]);
    expect(reissued.id).not.toBe(key.id);
    await emu.client().apiKeys.delete(Number(reissued.id));
    await emu.client().volumes.delete(Number(other.id));
  });

  it("sweep of a stack destroys what carries its tokens and its state does not hold, and nothing else", async () => {
    const made = async (id: ReturnType<typeof identity>) => (await Instance.create(base, { client: emu.client(), identity: id, wait: boots })).id;
    const held = await made(identity("a"));
    const orphan = await made(identity("b"));
    const otherStack = await made(identity("a", 0, "prod"));
    const notOurs = (await emu.client().instances.create((await emu.client().offers.search({ limit: 1 }))[0].id, { image: "x" })).new_contract;
    const state = { deployment: { resources: [
      { urn: "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev", type: "pulumi:pulumi:Stack" },
      { urn: urn("a"), type: "gpu-rental:index:Instance", id: held },
    ] } };
    const stack = stackHoldings(JSON.stringify(state));
    expect(stack).toMatchObject({ project: "proj", stack: "dev", instances: [Number(held)] });
    const report = await sweep(emu.client(), { stack, dryRun: true });
    expect(report.instances.map((i) => i.id)).toEqual([Number(orphan)]);
    expect(report.instances[0].token).toMatch(new RegExp(`^${stackTokenPrefix({ project: "proj", stack: "dev" })}-`));
    await sweep(emu.client(), { stack });
    expect(live()).toEqual([Number(held), Number(otherStack), notOurs].sort());
    expect(tokenOfInstance(emu.marketplace.instances.all().find((i) => i.id === notOurs) as unknown as InstanceRecord)).toBeUndefined();
  });

  it("check counts the creation's generation: 0 for a new resource, one more than the state's for an existing one and its replacement", () => {
    const fns = configureLifecycle({ get: () => undefined }).resource("Instance");
    const generation = (olds?: Record<string, unknown>, name = "g") => fns.check(base, undefined, olds, urn(name)).inputs.__generation;
    expect(generation()).toBe(0);
    expect(generation({ ...base })).toBe(1);
    // A replacement: the engine checks against the state, then the new half against nothing.
    expect(generation({ ...base, __generation: 3 })).toBe(4);
    expect(generation({})).toBe(4);
    expect(generation({}, "h")).toBe(0);
  });
});

describe("the creations of one provider context (one `pulumi up`)", () => {
  it("list the account once for what earlier runs left, not once a creation; after a creation that failed, the next lists again", async () => {
    const emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 0, loadingMs: 0 }, offers: 200 });
    try {
      const stack: Record<string, string> = { "gpu-rental:apiUrl": emu.url, "gpu-rental:apiKey": emu.apiKey };
      const Instance = configureLifecycle({ get: (k) => stack[k] }).resource("Instance");
      // A fault that changes nothing counts the listings (GET /api/v1/instances/; a boot's polls read one instance).
      emu.faults.add({ method: "GET", path: "/api/v1/instances/", kind: "latency", delayMs: 0, times: 1_000 });
      const listings = () => emu.faults.injected;
      await Promise.all(["a", "b", "c"].map((name) => Instance.create({ ...base, label: name }, urn(name))));
      expect(emu.marketplace.instances.all()).toHaveLength(3);
      expect(listings()).toBe(1);
      await expect(Instance.create({ ...base, gpuModel: "H100 NVL", label: "d" }, urn("d"))).rejects.toThrow(/H100 NVL/);
      expect(listings()).toBe(1);
      await Instance.create({ ...base, label: "e" }, urn("e"));
      expect(listings()).toBe(2);
    } finally {
      await emu.close();
    }
  });
});
