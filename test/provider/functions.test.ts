import { ed25519KeyPair } from "../../emulator";
import { configureLifecycle, offerSearchOf, ProcessStop } from "../../provider/lifecycle";
import { GpuRentalProvider } from "../../provider/plugin/provider";
import { DEFAULT_ORDER, offerQuery, TOKEN_ENV, VolumeQuery } from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";

/**
 * The package's functions, invoked as the engine invokes them (the plugin's shell, over the emulator): each answers
 * what the service shows, read-only, and refuses bad arguments before anything is asked, naming them.
 */
describe("the functions, through the plugin's shell", () => {
  let emu: TestEmulator;
  let provider: GpuRentalProvider;
  const invokeOf = async (name: string, args: Record<string, unknown>, by: GpuRentalProvider) => (await by.invoke(`gpu-rental:index:${name}`, args)).outputs as any;
  const invoke = (name: string, args: Record<string, unknown>) => invokeOf(name, args, provider);
  const providerOf = (apiUrl: string, apiKey: string) => {
    const stop = new ProcessStop();
    const made = new GpuRentalProvider("0.0.0", stop);
    made.configured(configureLifecycle({ get: (key) => ({ "gpu-rental:apiUrl": apiUrl, "gpu-rental:apiKey": apiKey })[key] }, { stop }));
    return made;
  };

  beforeAll(async () => {
    emu = await emulator();
    provider = providerOf(emu.url, emu.apiKey);
  });
  afterAll(() => emu.close());

  it("getOffers answers what the SDK's search of the same criteria answers, in its order, and what an Instance would rent first", async () => {
    const args = { gpuModel: "RTX 4090", filters: { reliability: { gte: 0.9 } }, maxPricePerHour: 5, limit: 7 };
    const { offers } = await invoke("getOffers", { ...args, gpuCount: null, order: null });
    const searched = await emu.client().offers.search(
      offerQuery({ filters: { gpu_name: { eq: "RTX 4090" }, reliability: { gte: 0.9 } }, maxPricePerHour: 5, order: DEFAULT_ORDER, candidatesPerSearch: 7 }),
    );
    expect(searched.length).toBeGreaterThan(1);
    expect(offers.map((o: any) => o.id)).toEqual(searched.map((o) => o.id));
    expect(offers[0]).toEqual({
      id: searched[0].id, gpuName: "RTX 4090", numGpus: searched[0].num_gpus, gpuRam: searched[0].gpu_ram, pricePerHour: searched[0].dph_total,
      reliability: searched[0].reliability, geolocation: searched[0].geolocation, verified: searched[0].verified,
    });
    expect(offerSearchOf(args)).toEqual(offerQuery({ filters: { gpu_name: { eq: "RTX 4090" }, reliability: { gte: 0.9 } }, maxPricePerHour: 5, candidatesPerSearch: 7 }));
    // Another order is followed; nothing was rented.
    const dearest = await invoke("getOffers", { gpuModel: "RTX 4090", order: [["dph_total", "desc"]], limit: 3 });
    expect(dearest.offers.map((o: any) => o.pricePerHour)).toEqual([...dearest.offers.map((o: any) => o.pricePerHour)].sort((a, b) => b - a));
    expect(emu.marketplace.instances.all()).toEqual([]);
  });

  it("getEnvVars answers the names of the account's variables, sorted, and never a value", async () => {
    expect(await invoke("getEnvVars", {})).toEqual({ names: [] });
    await emu.client().envVars.create("wandb_api_key", "w-secret");
    await emu.client().envVars.create("HF_TOKEN", "hf-secret");
    const found = await invoke("getEnvVars", {});
    expect(found).toEqual({ names: ["HF_TOKEN", "WANDB_API_KEY"] });
    for (const key of found.names) await emu.client().envVars.delete(key);
  });

  it("getUser answers the account the key acts for, and its credit as billing leaves it", async () => {
    const user = await emu.client().users.current();
    expect(await invoke("getUser", {})).toEqual({
      id: user.id, email: user.email, username: user.username ?? null, fullName: user.fullname ?? user.full_name ?? null, credit: user.credit, twoFactor: false,
    });
    // Another account's key answers that account.
    const other = emu.account("other@gpu-rental.test");
    expect(await invokeOf("getUser", {}, providerOf(emu.url, other.key))).toMatchObject({ id: other.id, email: "other@gpu-rental.test" });
  });

  it("getSshKeys answers every key registered on the account, oldest first, with the id to import", async () => {
    const before = (await invoke("getSshKeys", {})).keys;
    const first = await emu.client().sshKeys.add(ed25519KeyPair("first").public);
    emu.marketplace.clock.advance(1_000);
    const second = await emu.client().sshKeys.add(ed25519KeyPair("second").public);
    const { keys } = await invoke("getSshKeys", {});
    expect(keys.slice(before.length)).toEqual([
      { id: first.id, publicKey: expect.stringContaining("first"), createdAt: expect.any(Number) },
      { id: second.id, publicKey: expect.stringContaining("second"), createdAt: expect.any(Number) },
    ]);
    expect(keys[before.length].createdAt).toBeLessThan(keys[before.length + 1].createdAt);
    await emu.client().sshKeys.delete(first.id);
    await emu.client().sshKeys.delete(second.id);
  });

  it("refuses bad arguments before anything is asked, each named", async () => {
    // A service that does not answer: each refusal comes before a request would.
    const invoke = (name: string, args: Record<string, unknown>) => invokeOf(name, args, providerOf("http://127.0.0.1:9", "no-service"));
    await expect(invoke("getOffers", { limit: -1 })).rejects.toThrow(/^Invalid getOffers: limit: limit must be a whole number from 1 to 1000$/);
    // The one check of declared filters (sdk/filter-check.ts), as an Instance's: operators, fields, operands.
    await expect(invoke("getOffers", { filters: { gpu_ram: { greater: 24000 } } })).rejects.toThrow(/^Invalid getOffers: filters\.gpu_ram\.greater: not an operator/);
    await expect(invoke("getOffers", { filters: { reliabilty: { gte: 0.9 } } })).rejects.toThrow(/filters\.reliabilty: not a field the search filters on .*did you mean reliability\?/);
    await expect(invoke("getOffers", { gpuCount: 0 })).rejects.toThrow(/Invalid getOffers: gpuCount/);
    await expect(invoke("getTemplates", { filters: { name: { like: "x" } } })).rejects.toThrow(/Invalid getTemplates: filters\.name/);
    await expect(invoke("getInstance", {})).rejects.toThrow(/Invalid getInstance: id/);
    await expect(invoke("getInstances", { tokenPrefix: "Not-A-Prefix" })).rejects.toThrow(/Invalid getInstances: tokenPrefix: tokenPrefix is 1 to 20 lowercase/);
    await expect(invoke("getNetworkVolumeOffers", { size: -5 })).rejects.toThrow(/Invalid getNetworkVolumeOffers: size/);
    await expect(invoke("getNothing", {})).rejects.toThrow(/gpu-rental has no function gpu-rental:index:getNothing/);
  });

  it("getTemplates finds by name or by filters; getInstance and getInstances show the account's instances, by label, token prefix and status", async () => {
    const client = emu.client();
    const template = await client.templates.create({ name: "fn-worker", image: "pytorch/pytorch", tag: "2.4", docker_login_repo: "", docker_login_user: "", docker_login_pass: "" });
    const byName = await invoke("getTemplates", { name: "fn-worker" });
    expect(byName.templates).toEqual([{ id: template.id, hashId: template.hash_id, name: "fn-worker", image: "pytorch/pytorch", tag: "2.4" }]);
    expect((await invoke("getTemplates", { filters: { image: { eq: "pytorch/pytorch" }, name: { eq: "fn-worker" } } })).templates).toEqual(byName.templates);

    const [a, b] = await client.offers.search({ filters: { rentable: { eq: true } }, limit: 2 });
    const tagged = (await client.instances.create(a.id, { image: "x", label: "fn", env: { [TOKEN_ENV]: "nightly42-abcdefghij" } })).new_contract;
    const plain = (await client.instances.create(b.id, { image: "x", label: "fn" })).new_contract;
    emu.marketplace.clock.advance(600_000);
    expect(await invoke("getInstance", { id: tagged })).toMatchObject({ id: tagged, label: "fn", status: "running", token: "nightly42-abcdefghij", gpuName: a.gpu_name });
    await expect(invoke("getInstance", { id: 999_999 })).rejects.toThrow(/getInstance: the account has no instance 999999/);
    expect((await invoke("getInstances", { label: "fn" })).instances.map((i: any) => i.id)).toEqual([tagged, plain]);
    expect((await invoke("getInstances", { label: "fn", tokenPrefix: "nightly42" })).instances.map((i: any) => i.id)).toEqual([tagged]);
    await client.instances.stop(plain);
    emu.marketplace.clock.advance(600_000);
    expect((await invoke("getInstances", { status: "running" })).instances.map((i: any) => i.id)).toEqual([tagged]);
    expect((await invoke("getInstances", { status: "no-such-status" })).instances).toEqual([]);
    for (const id of [tagged, plain]) await client.instances.destroy(id);
    await client.templates.delete(template.id);
  });

  it.each([
    ["getNetworkVolumeOffers", (q: VolumeQuery) => emu.client().volumes.searchNetworkOffers(q)],
    ["getLocalVolumeOffers", (q: VolumeQuery) => emu.client().volumes.searchLocalOffers(q)],
  ] as const)("%s answers the offers with room for size, cheapest storage first", async (name, search) => {
    const { offers } = await invoke(name, { q: { limit: 5 }, size: 10 });
    expect(offers.length).toBeGreaterThan(0);
    expect(offers.every((o: any) => o.diskSpace >= 10)).toBe(true);
    expect(offers.map((o: any) => o.storageCost)).toEqual([...offers.map((o: any) => o.storageCost)].sort((x, y) => x - y));
    const searched = await search({ order: [["storage_cost", "asc"]], limit: 5, allocated_storage: 10 });
    expect(offers.map((o: any) => o.id)).toEqual(searched.map((o) => o.ask_contract_id));
  });

  it("getInvoices answers the credit and each instance's charges as billing leaves them, and what they sum to, within a period", async () => {
    const client = emu.client();
    const [offer] = await client.offers.search({ limit: 1 });
    const { new_contract: id } = await client.instances.create(offer.id, { image: "ubuntu" });
    emu.marketplace.clock.advance(3_600_000);
    const answered = await invoke("getInvoices", {});
    const billed = await client.billing.invoices();
    expect(answered.credit).toBe(billed.credit);
    const charge = answered.items.find((item: any) => item.instanceId === id);
    expect(charge).toMatchObject({ type: "charge", amount: expect.any(Number), description: expect.any(String) });
    expect(charge.amount).toBeGreaterThan(0);
    const charges = billed.invoices.filter((row) => row.instance_id !== undefined);
    expect(answered.charged).toBeCloseTo(charges.reduce((sum, row) => sum + row.amount, 0), 9);
    expect(answered.items.map((item: any) => item.start)).toEqual([...answered.items.map((item: any) => item.start)].sort((a, b) => a - b));
    // A period: this instance's charge ends now, the opening payment long before (other tests' charges in between).
    const now = emu.marketplace.clock.now() / 1000;
    const within = async (period: Record<string, unknown>) => (await invoke("getInvoices", period)).items.map((item: any) => item.instanceId ?? item.type);
    expect(await within({ from: now - 60 })).toContain(id);
    expect(await within({ from: now - 60 })).not.toContain("payment");
    expect(await within({ to: now - 60 })).toContain("payment");
    expect(await within({ to: now - 60 })).not.toContain(id);
    await expect(invoke("getInvoices", { from: now, to: now - 1 })).rejects.toThrow(/to: .*ends before it begins/);
    await client.instances.destroy(id);
  });

  it("getAuditLogs answers the account's changes, newest first, narrowed by route and time; getGpuPrices a model's market prices now and before", async () => {
    const client = emu.client();
    // After the other tests' changes (the clock is frozen: they share its time otherwise).
    emu.marketplace.clock.advance(1000);
    const since = emu.marketplace.clock.nowSeconds();
    const [offer] = await client.offers.search({ filters: { gpu_name: { eq: "RTX 3090" } }, limit: 1 });
    const { new_contract: id } = await client.instances.create(offer.id, { image: "ubuntu" });
    await client.instances.update(id, { label: "audited" });
    const all = (await invoke("getAuditLogs", { since })).entries;
    expect(all.map((e: any) => e.route)).toEqual(["PUT /api/v0/instances/{id}/", "PUT /api/v0/asks/{offer_id}/"]);
    expect(all[0]).toMatchObject({ ipAddress: "127.0.0.1", apiKeyId: expect.any(Number), args: JSON.stringify({ id: String(id), fields: ["label"] }) });
    expect((await invoke("getAuditLogs", { since, route: "asks" })).entries).toHaveLength(1);
    await expect(invoke("getAuditLogs", { route: 7 })).rejects.toThrow(/route/);

    const prices = await invoke("getGpuPrices", { gpuName: "RTX_3090" });
    const now = (await client.gpuMetrics.current({ verified: "all" })).find((row) => row.gpu_name === "RTX 3090")!;
    expect(prices).toMatchObject({ gpuName: "RTX 3090", available: now.available, total: now.total, priceMedian: now.price_median, priceP10: now.price_p10 });
    expect(prices.history.length).toBeGreaterThanOrEqual(20);
    await expect(invoke("getGpuPrices", { gpuName: "RTX 3090", hours: 2000, stepHours: 1 })).rejects.toThrow(/stepHours/);
    await client.instances.destroy(id);
  });
});
