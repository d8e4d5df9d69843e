import * as path from "node:path";
import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { REPO_ROOT } from "../helpers/paths";
import { DynamicHost, ProviderHost } from "../helpers/provider-host";

// The compiled provider, as a program loads it from the package (`gpu-rental/provider`).
const { PROVIDER_MODULE } = require(path.join(REPO_ROOT, "dist", "provider", "index.js"));

const DIFF_NONE = 1;
const DIFF_SOME = 2;

/**
 * gpu-rental's provider in both plugins that serve dynamic providers: the toolchain's, and @pulumi/pulumi's own,
 * which a user's own Pulumi installation runs.
 */
describe.each(["gpu-rental", "@pulumi/pulumi"] as DynamicHost[])("in the %s plugin", (plugin) => {
  let emu: TestEmulator;
  let host: ProviderHost;

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 20, loadingMs: 40 } });
    host = await ProviderHost.start(PROVIDER_MODULE, "Instance", REPO_ROOT, plugin);
    await host.configure({ "gpu-rental:apiUrl": emu.url, "gpu-rental:apiKey": emu.apiKey });
  });
  afterAll(async () => {
    host.stop();
    await emu.close();
  });

  const spec = { gpuModel: "RTX 3090", image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", label: "host-test" };

  it("keeps the provider small when serialized: the SDK is loaded, not captured", () => {
    expect(host.serializedProvider.length).toBeLessThan(20_000);
    expect(host.serializedProvider).not.toContain(emu.apiKey);
    // A captured module of the package would be written as a require of its file, which the package's exports
    // hide from a program that installed it: only node's own modules may be required.
    const required = [...host.serializedProvider.matchAll(/require\(["']([^"']+)["']\)/g)].map((m) => m[1]);
    expect(required.filter((name) => !name.startsWith("node:"))).toEqual([]);
  });

  it("checks inputs and names the bad ones", async () => {
    const { failures } = await host.check({}, { image: "", runtype: "telnet" });
    expect(failures.map((f) => f.property).sort()).toEqual(["image", "runtype"]);
    expect((await host.check({}, spec)).failures).toEqual([]);
  });

  it("creates, diffs, updates, reads and deletes through the real provider host", async () => {
    const { id, outs } = await host.create(spec);
    const instance = emu.marketplace.instances.all().find((i) => String(i.id) === id)!;
    expect(instance).toMatchObject({ label: "host-test", intended: "running" });
    expect(instance.offer.gpu_name).toBe("RTX 3090");
    expect(outs).toMatchObject({ instanceId: Number(id), status: "running", gpuName: "RTX 3090", sshPort: expect.any(Number) });

    expect(await host.diff(id, outs, spec)).toMatchObject({ changes: DIFF_NONE, replaces: [] });
    expect(await host.diff(id, outs, { ...spec, label: "renamed" })).toMatchObject({ changes: DIFF_SOME, replaces: [] });
    expect(await host.diff(id, outs, { ...spec, image: "other" })).toMatchObject({ changes: DIFF_SOME, replaces: ["image"] });

    const updated = await host.update(id, outs, { ...spec, label: "renamed" });
    expect(updated).toMatchObject({ instanceId: Number(id), label: "renamed" });
    expect(emu.marketplace.instances.all().find((i) => String(i.id) === id)!.label).toBe("renamed");

    const read = await host.read(id, updated);
    expect(read).toMatchObject({ id, props: { label: "renamed", rentedOfferId: outs.rentedOfferId } });

    await host.delete(id, updated);
    expect(emu.marketplace.instances.all().find((i) => String(i.id) === id)).toBeUndefined();
    expect((await host.read(id, updated)).id).toBe("");
  });

  it("reports a service error as a failed create, leaving nothing behind", async () => {
    const before = emu.marketplace.instances.all().length;
    await expect(host.create({ ...spec, gpuModel: "Voodoo 2" })).rejects.toThrow(/No offer matches/);
    expect(emu.marketplace.instances.all()).toHaveLength(before);
  });
});
