import { configureLifecycle, ProcessStop, ResourceFunctions, UNKNOWN } from "../../provider/lifecycle";
import { GpuRentalProvider } from "../../provider/plugin/provider";
import { emulator, TestEmulator } from "../helpers/emulator";

/**
 * What preview checks of a resource's inputs before anything is rented, as both shells run it (the lifecycle's
 * check and warnings, which the dynamic providers and the plugin call from `check`): names the kind does not take,
 * its filters (sdk/filter-check.ts, tested there rule by rule), values not known yet and secrets left as they are,
 * and a warning when the market has nothing the criteria match. test/package/own-program-js.test.ts and
 * test/languages/yaml.test.ts run the same through the real engine.
 */

const lifecycle = configureLifecycle({ get: () => undefined });
const [Instance, GpuFleet, Template] = ["Instance", "GpuFleet", "Template"].map((kind) => lifecycle.resource(kind));
const failures = (fns: ResourceFunctions, news: Record<string, unknown>, unknown?: unknown) => fns.check(news, unknown).failures.map((f) => [f.property, f.reason]);
const IMAGE = { image: "pytorch/pytorch" };

describe("input names a kind does not take", () => {
  it("are refused, each naming the nearest input of the kind (a JavaScript program passes any name)", () => {
    expect(failures(Instance, { ...IMAGE, maxLifetme: "10m" })).toEqual([["maxLifetme", "maxLifetme is not an input of Instance: did you mean maxLifetime?"]]);
    expect(failures(Instance, { ...IMAGE, max_lifetime: "10m", adoptid: 4 })).toEqual([
      ["max_lifetime", "max_lifetime is not an input of Instance: did you mean maxLifetime?"],
      ["adoptid", "adoptid is not an input of Instance: did you mean adoptId?"],
    ]);
    expect(failures(Template, { name: "t", image: "i", imag: "j" })).toEqual([["imag", "imag is not an input of Template: did you mean image?"]]);
    // Far from every input: the inputs are listed instead.
    expect(failures(Instance, { ...IMAGE, region: "US" })).toEqual([["region", expect.stringMatching(/^region is not an input of Instance\. Its inputs: account, adoptId, argsStr, /)]]);
  });

  it("leave alone the engine's and the shells' own (`__provider`, `__urn`), the common inputs, and names given null", () => {
    const own = { __provider: "serialized", __urn: "urn:pulumi:dev::p::gpu-rental:index:Instance::w", __generation: 2, account: { name: "team" }, adoptId: 7 };
    expect(failures(Instance, { ...IMAGE, ...own, maxLifetme: null })).toEqual([]);
  });

  it("are refused whatever their value, even one not known yet (preview)", () => {
    expect(failures(Instance, { ...IMAGE, maxLifetme: UNKNOWN }, UNKNOWN)).toEqual([["maxLifetme", expect.stringContaining("did you mean maxLifetime?")]]);
  });

  it("of a fleet: its members' inputs are its own, and what it refuses by its own rule is refused once", () => {
    const fleet = { ...IMAGE, size: 2, labelPrefix: "w" };
    expect(failures(GpuFleet, { ...fleet, maxLifetime: "1h", gpuModel: "RTX 4090" })).toEqual([]);
    expect(failures(GpuFleet, { ...fleet, maxLifetme: "1h", label: "x" })).toEqual([
      ["label", expect.stringMatching(/^label is not a GpuFleet input: members are labelled/)],
      ["maxLifetme", "maxLifetme is not an input of GpuFleet: did you mean maxLifetime?"],
    ]);
  });
});

describe("declared filters", () => {
  it("are checked in every kind that takes them: an Instance's and a fleet's filters, a template's extraFilters", () => {
    const misspelt = { reliabilty: { gte: 0.99 } };
    const named = ["filters", expect.stringMatching(/^filters\.reliabilty: not a field the search filters on .*did you mean reliability\?$/)];
    expect(failures(Instance, { ...IMAGE, filters: misspelt })).toEqual([named]);
    expect(failures(GpuFleet, { ...IMAGE, size: 1, labelPrefix: "w", filters: misspelt })).toEqual([named]);
    expect(failures(Template, { name: "t", image: "i", extraFilters: misspelt })).toEqual([["extraFilters", expect.stringMatching(/^extraFilters\.reliabilty: .*did you mean reliability\?$/)]]);
    expect(failures(Instance, { ...IMAGE, filters: { reliability: { gte: "high" } } })).toEqual([
      ["filters", 'filters.reliability.gte: reliability takes a number (or its decimal text, "0.99", as stack config gives it)'],
    ]);
    expect(failures(Instance, { ...IMAGE, filters: { reliability: { gte: "0.99" }, gpu_ram: { gte: 24000 }, verified: { eq: true } } })).toEqual([]);
  });

  it("are checked where known when a value inside is not known yet (preview), and wait for the rest", () => {
    // A misspelt field beside an operand not known yet: refused now.
    expect(failures(Instance, { ...IMAGE, filters: { reliabilty: { gte: 0.99 }, gpu_ram: { gte: UNKNOWN } } }, UNKNOWN)).toEqual([["filters", expect.stringContaining("did you mean reliability?")]]);
    // The unknown operand itself, and a misspelt field whose only operand is unknown, wait until they are known.
    expect(failures(Instance, { ...IMAGE, filters: { gpu_ram: { gte: UNKNOWN } } }, UNKNOWN)).toEqual([]);
    expect(failures(Instance, { ...IMAGE, filters: { reliabilty: { gte: UNKNOWN } } }, UNKNOWN)).toEqual([]);
    expect(failures(Instance, { ...IMAGE, filters: { reliabilty: { gte: UNKNOWN } } })).toEqual([["filters", expect.stringContaining("did you mean reliability?")]]);
    // The same holds of every input known in part: a volume's mount path is checked while its id is not known.
    expect(failures(Instance, { ...IMAGE, volume: { volumeId: UNKNOWN, mountPath: "" } }, UNKNOWN)).toEqual([["volume", expect.stringMatching(/^volume\.mountPath: /)]]);
    expect(failures(Instance, { ...IMAGE, volume: { volumeId: UNKNOWN, mountPath: "/data" } }, UNKNOWN)).toEqual([]);
  });
});

describe("the plugin's check", () => {
  it("returns the inputs as given, secrets and values not known yet untouched, and names no secret in a refusal", async () => {
    const stop = new ProcessStop();
    const provider = new GpuRentalProvider("0.0.0", stop);
    provider.configured(configureLifecycle({ get: () => undefined }, { stop }));
    const urn = "urn:pulumi:dev::proj::gpu-rental:index:Instance::w";
    const secret = (value: unknown) => ({ "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value });
    const news = { ...IMAGE, label: UNKNOWN, filters: { reliability: { gte: secret(0.99) }, gpu_ram: { gte: UNKNOWN } }, env: secret({ TOKEN: "t0ken" }) };
    const passed = await provider.check(urn, {}, news);
    expect(passed.failures).toEqual([]);
    expect(passed.inputs).toMatchObject(news);

    const refused = await provider.check(urn, {}, { ...news, maxLifetme: secret("s3cr3t-10m"), filters: { reliability: { gte: secret("s3cr3t-high") } } });
    expect(refused.failures?.map((f) => f.property)).toEqual(["filters", "maxLifetme"]);
    expect(JSON.stringify(refused.failures)).not.toContain("s3cr3t");
    expect(refused.inputs).toMatchObject({ maxLifetme: secret("s3cr3t-10m"), filters: { reliability: { gte: secret("s3cr3t-high") } } });
  });
});

/** Against the emulator over HTTP: what `pulumi preview` warns of criteria the market cannot meet now. */
describe("preview's warning when no offer matches", () => {
  let emu: TestEmulator;
  let Instance: ResourceFunctions;
  let GpuFleet: ResourceFunctions;
  beforeAll(async () => {
    emu = await emulator();
    const lifecycle = configureLifecycle({ get: (key) => ({ "gpu-rental:apiUrl": emu.url, "gpu-rental:apiKey": emu.apiKey })[key] });
    [Instance, GpuFleet] = [lifecycle.resource("Instance"), lifecycle.resource("GpuFleet")];
  });
  afterAll(() => emu.close());

  it("warns of a GPU model no offer has, in the words of up's refusal; not of one the market has", async () => {
    const warnings = (await Instance.lookAhead({}, { ...IMAGE, gpuModel: "RTX 4909", label: "trainer" }, UNKNOWN)).warnings;
    expect(warnings).toEqual([
      'gpu-rental Instance trainer: No offer matches {"rentable":{"eq":true},"gpu_name":{"eq":"RTX 4909"},"direct_port_count":{"gte":1}} on the market now: ' +
        "`pulumi up` will find nothing to rent. Search the market with other criteria, or a higher price limit.",
    ]);
    const refusal = await Instance.create({ ...IMAGE, gpuModel: "RTX 4909" }).catch((error: Error) => error.message);
    expect(refusal).toContain('No offer matches {"rentable":{"eq":true},"gpu_name":{"eq":"RTX 4909"}');
    expect((await Instance.lookAhead({}, { ...IMAGE, gpuModel: "RTX 4090" }, UNKNOWN)).warnings).toEqual([]);
    expect((await Instance.lookAhead({}, { ...IMAGE, offerId: 99 }, UNKNOWN)).warnings).toEqual([expect.stringContaining("Offer 99 is not available (it does not exist, or it is rented) on the market now")]);
    expect(emu.marketplace.instances.all()).toEqual([]);
  });

  it("warns of a fleet larger than the offers that match; says nothing while the criteria are not known, or of an existing resource", async () => {
    const h100 = (await emu.client().offers.search({ filters: { gpu_name: { eq: "H100 SXM" }, rentable: { eq: true }, direct_port_count: { gte: 1 } }, limit: 1000 })).length;
    expect(h100).toBeGreaterThan(0);
    const fleet = { ...IMAGE, gpuModel: "H100 SXM", labelPrefix: "big" };
    expect((await GpuFleet.lookAhead({}, { ...fleet, size: h100 }, UNKNOWN)).warnings).toEqual([]);
    expect((await GpuFleet.lookAhead({}, { ...fleet, size: h100 + 1 }, UNKNOWN)).warnings).toEqual([
      expect.stringMatching(new RegExp(`^gpu-rental GpuFleet big: Only ${h100} offer\\(s\\) match .* on the market now, for ${h100 + 1} instances: \`pulumi up\` will fail`)),
    ]);
    expect((await Instance.lookAhead({}, { ...IMAGE, gpuModel: UNKNOWN }, UNKNOWN)).warnings).toEqual([]);
    expect((await Instance.lookAhead({}, { ...IMAGE, filters: { gpu_name: { eq: "RTX 4909" }, gpu_ram: { gte: UNKNOWN } } }, UNKNOWN)).warnings).toEqual([]);
    expect((await Instance.lookAhead({ ...IMAGE, gpuModel: "RTX 4090" }, { ...IMAGE, gpuModel: "RTX 4909" }, UNKNOWN)).warnings).toEqual([]);
  });

  it("asks the service once for the resources of one provider process that share their criteria, each warned by name", async () => {
    // A key whose daily search quota the first look spends whole: a second search of it would be refused (429).
    const { key } = emu.account("looks@example.com");
    const own = configureLifecycle({ get: (k) => ({ "gpu-rental:apiUrl": emu.url, "gpu-rental:apiKey": key })[k] });
    const [fleets, instances] = [own.resource("GpuFleet"), own.resource("Instance")];
    const h100 = (await emu.client().offers.search({ filters: { gpu_name: { eq: "H100 SXM" }, rentable: { eq: true }, direct_port_count: { gte: 1 } }, limit: 1000 })).length;
    const settings = (searchQuota: object) => fetch(`${emu.url}/_emulator/settings`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ searchQuota }) });
    await settings({ rowsPerDay: h100 });
    try {
      const looks = await Promise.all(["a", "b", "c"].map((prefix) => fleets.lookAhead({}, { ...IMAGE, gpuModel: "H100 SXM", labelPrefix: prefix, size: h100 + 1 }, UNKNOWN)));
      expect(looks.map((look) => look.warnings)).toEqual(["a", "b", "c"].map((prefix) => [expect.stringMatching(new RegExp(`^gpu-rental GpuFleet ${prefix}: Only ${h100} offer\\(s\\) match`))]));
      // The quota is spent: a question not asked before is refused, and preview says nothing rather than fail.
      expect((await instances.lookAhead({}, { ...IMAGE, gpuModel: "RTX 4909" }, UNKNOWN)).warnings).toEqual([]);
      await settings({ rowsPerDay: 0 });
      // A question that failed is asked again.
      expect((await instances.lookAhead({}, { ...IMAGE, gpuModel: "RTX 4909", label: "t" }, UNKNOWN)).warnings).toEqual([expect.stringContaining("gpu-rental Instance t: No offer matches")]);
    } finally {
      await settings({ rowsPerDay: 0 });
    }
  });
});
