import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";

/**
 * The root stack, deployed by the real `pulumi` engine (built from Go modules by tools/pulumi-toolchain.sh)
 * against a real emulator over HTTP; every step is checked against the emulator's own state.
 */
describe("root stack through the real engine", () => {
  let emu: TestEmulator;
  let stack: TestStack;
  const instances = () => emu.marketplace.instances.all();

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 100, loadingMs: 200 } });
    stack = new TestStack(`e2e-${process.pid}`);
    await stack.init({ "gpu-rental:apiUrl": emu.url, label: "e2e-first" }, { "gpu-rental:apiKey": emu.apiKey });
  }, 120_000);

  afterAll(async () => {
    await stack.dispose();
    await emu.close();
  }, 120_000);

  let firstId: number;

  it("up creates the instance and exports its ssh endpoint", async () => {
    const out = await stack.ok("up", "--yes");
    expect(out).toMatch(/\+ 2 created/);
    expect(instances()).toHaveLength(1);
    const [instance] = instances();
    firstId = instance.id;
    const outputs = await stack.outputs();
    expect(outputs).toMatchObject({ instanceId: firstId, status: "running", gpuName: "RTX 4090" });
    expect(outputs.sshHost).toBe(instance.publicIp);
    expect(outputs.sshPort).toBe(Number(instance.ports["22/tcp"][0].HostPort));
    expect(instance).toMatchObject({ label: "e2e-first", intended: "running" });
    expect(instance.config.image).toBe("pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime");
  });

  it("a second up reports no changes", async () => {
    const out = await stack.ok("up", "--yes", "--expect-no-changes");
    expect(out).toMatch(/2 unchanged/);
    expect(instances().map((i) => i.id)).toEqual([firstId]);
  });

  it("a label change is an update in place", async () => {
    await stack.ok("config", "set", "label", "e2e-renamed");
    const out = await stack.ok("up", "--yes");
    expect(out).toMatch(/~ 1 updated/);
    expect(out).not.toMatch(/replaced/);
    expect(instances().map((i) => [i.id, i.label])).toEqual([[firstId, "e2e-renamed"]]);
  });

  it("an image change replaces the instance", async () => {
    await stack.ok("config", "set", "image", "nvidia/cuda:12.4.1-devel-ubuntu22.04");
    const out = await stack.ok("up", "--yes");
    expect(out).toMatch(/\+-\s*1 replaced/);
    expect(instances()).toHaveLength(1);
    const [replacement] = instances();
    expect(replacement.id).not.toBe(firstId);
    expect(replacement.config.image).toBe("nvidia/cuda:12.4.1-devel-ubuntu22.04");
    expect((await stack.outputs()).instanceId).toBe(replacement.id);
  });

  it("refresh follows the instance as it is, and never replaces it when the market changes", async () => {
    const [instance] = instances();
    // Someone relabels it by hand, and the market moves: the offer rented is no longer the cheapest.
    emu.marketplace.instances.update(instance, { label: "changed-by-hand" });
    const client = emu.client();
    const [cheapest] = await client.offers.search({ filters: { gpu_name: { eq: "RTX 4090" } }, order: [["dph_total", "asc"]], limit: 1 });
    await client.instances.create(cheapest.id, { image: "someone-else" });

    await stack.ok("refresh", "--yes");
    const state = JSON.parse(await stack.ok("stack", "export"));
    const resource = state.deployment.resources.find((r: any) => r.type.endsWith(":Instance"));
    expect(resource.outputs.label).toBe("changed-by-hand");
    // The instance's own key is a secret output: only its ciphertext is in state.
    expect(resource.outputs.instanceApiKey).toEqual(expect.objectContaining({ ciphertext: expect.any(String) }));
    expect(resource.id).toBe(String(instance.id));

    const preview = await stack.ok("preview", "--diff");
    expect(preview).toMatch(/~ 1 to update/);
    expect(preview).not.toMatch(/to replace/);
    await stack.ok("up", "--yes");
    expect(emu.marketplace.instances.all().find((i) => i.id === instance.id)!.label).toBe("e2e-renamed");
    await client.instances.destroy((await client.instances.list()).find((i) => i.image_uuid === "someone-else")!.id);
  });

  it("destroy leaves zero instances in the emulator", async () => {
    const out = await stack.ok("destroy", "--yes");
    expect(out).toMatch(/- 2 deleted/);
    expect(instances()).toHaveLength(0);
  });

  it("never writes or prints the API key in plaintext", () => {
    const everything = stack.stateText() + stack.transcript.join("\n");
    expect(everything.length).toBeGreaterThan(1000);
    expect(everything).not.toContain(emu.apiKey);
  });
});

describe("root stack under contention", () => {
  it("succeeds when half of all accepted offers have vanished, after retries", async () => {
    // Contention draws come from their own seeded stream: with seed 2 the first three accepts lose and the
    // fourth wins, so this run always goes through retries.
    const emu = await emulator({ seed: 2, contention: 0.5, clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 50 } });
    const stack = new TestStack(`contention-${process.pid}`);
    try {
      await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey });
      await stack.ok("up", "--yes");
      const { stats } = emu.marketplace;
      expect(stats.offersLostToContention).toBe(3);
      expect(stats.offersAccepted).toBe(1);
      expect(emu.marketplace.instances.all()).toHaveLength(1);
      await stack.ok("destroy", "--yes");
      expect(emu.marketplace.instances.all()).toHaveLength(0);
    } finally {
      await stack.dispose();
      await emu.close();
    }
  }, 180_000);
});
