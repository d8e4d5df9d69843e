import * as path from "node:path";
import { emulator, TestEmulator } from "../helpers/emulator";
import { REPO_ROOT } from "../helpers/paths";
import { ProviderHost } from "../helpers/provider-host";

// The compiled providers, as a program loads them from the package (`gpu-rental/provider`).
const { PROVIDER_MODULE } = require(path.join(REPO_ROOT, "dist", "provider", "index.js"));

const DIFF_NONE = 1;
const DIFF_SOME = 2;

let emu: TestEmulator;
const hosts: ProviderHost[] = [];

beforeAll(async () => {
  emu = await emulator();
});
afterAll(async () => {
  for (const host of hosts) host.stop();
  await emu.close();
});

/** A provider host running `provider`, configured against the emulator through stack config. */
async function hostOf(provider: string, kind: string): Promise<ProviderHost> {
  const host = await ProviderHost.start(provider, kind);
  hosts.push(host);
  await host.configure({ "gpu-rental:apiUrl": emu.url, "gpu-rental:apiKey": emu.apiKey });
  expect(host.serializedProvider.length).toBeLessThan(20_000);
  expect(host.serializedProvider).not.toContain(emu.apiKey);
  return host;
}

describe("Template through the real provider host", () => {
  const spec = { name: "host-template", image: "nvidia/cuda", tag: "12.4.1", runtype: "ssh", sshDirect: true, dockerLoginPass: "p" };
  const mine = async () => (await emu.client().templates.search({ name: { eq: "host-template" } }));

  it("checks, creates, diffs, updates in place, reads and deletes", async () => {
    const host = await hostOf(PROVIDER_MODULE, "Template");
    expect((await host.check({}, { ...spec, name: "", runtype: "vnc" })).failures.map((f) => f.property).sort()).toEqual(["name", "runtype"]);

    const { id, outs } = await host.create(spec);
    expect(outs).toMatchObject({ templateId: Number(id), hashId: expect.any(String), tag: "12.4.1" });
    expect(await host.diff(id, outs, spec)).toMatchObject({ changes: DIFF_NONE, replaces: [] });
    expect(await host.diff(id, outs, { ...spec, tag: "12.5.0" })).toMatchObject({ changes: DIFF_SOME, replaces: [] });

    const updated = await host.update(id, outs, { ...spec, tag: "12.5.0" });
    expect(updated).toMatchObject({ templateId: Number(id), tag: "12.5.0" });
    expect(updated.hashId).not.toBe(outs.hashId);
    expect((await mine()).map((t) => [t.id, t.hash_id, t.tag])).toEqual([[Number(id), updated.hashId, "12.5.0"]]);

    expect(await host.read(id, updated)).toMatchObject({ id, props: { hashId: updated.hashId } });
    await host.delete(id, updated);
    expect(await mine()).toEqual([]);
    expect((await host.read(id, updated)).id).toBe("");
    await host.delete(id, updated);
  });
});

describe("NetworkVolume through the real provider host", () => {
  const spec = { q: { verified: { eq: true } }, size: 20, name: "host-volume" };

  it("checks, creates, diffs, updates new criteria in place, reads and deletes", async () => {
    const host = await hostOf(PROVIDER_MODULE, "NetworkVolume");
    expect((await host.check({}, { offerId: 1, q: {}, size: 1 })).failures.map((f) => f.property)).toEqual(["offerId"]);

    const { id, outs } = await host.create(spec);
    // Named with a creation token: the resource's own (derived from its URN, as a program's resources all have one).
    expect(outs).toMatchObject({ volumeId: Number(id), diskSpace: 20, volumeName: expect.stringMatching(/^host-volume-gr[a-z2-7]*-[a-z2-7]{10}$/), status: "available" });
    expect(await host.diff(id, outs, spec)).toMatchObject({ changes: DIFF_NONE, replaces: [] });
    expect(await host.diff(id, outs, { ...spec, size: 30 })).toMatchObject({ changes: DIFF_SOME, replaces: ["size"], deleteBeforeReplace: false });
    const newCriteria = { ...spec, q: { geolocation: { in: ["US"] } } };
    expect(await host.diff(id, outs, newCriteria)).toMatchObject({ changes: DIFF_SOME, replaces: [] });
    const updated = await host.update(id, outs, newCriteria);
    expect(updated).toMatchObject({ volumeId: Number(id), q: newCriteria.q });

    expect(await host.read(id, outs)).toMatchObject({ id, props: { volumeId: Number(id), askContractId: outs.askContractId } });
    await host.delete(id, outs);
    expect(await emu.client().volumes.list()).toEqual([]);
    expect((await host.read(id, outs)).id).toBe("");
    await host.delete(id, outs);
  });
});

describe("ApiKey through the real provider host", () => {
  const spec = { name: "host-key", permissions: { api: { instance_read: {} } } };

  it("checks, creates, diffs (replace only), reads and deletes", async () => {
    const host = await hostOf(PROVIDER_MODULE, "ApiKey");
    expect((await host.check({}, { permissions: { api: [] } })).failures.map((f) => f.property)).toEqual(["permissions"]);

    const { id, outs } = await host.create(spec);
    expect(outs).toMatchObject({ ...spec, keyId: Number(id), key: expect.any(String), keyPrefix: expect.any(String) });
    expect(await host.diff(id, outs, spec)).toMatchObject({ changes: DIFF_NONE, replaces: [] });
    expect(await host.diff(id, outs, { name: "host-key" })).toMatchObject({ changes: DIFF_SOME, replaces: ["permissions"] });

    expect(await host.read(id, outs)).toMatchObject({ id, props: { key: outs.key } });
    await host.delete(id, outs);
    expect((await host.read(id, outs)).id).toBe("");
    await host.delete(id, outs);
  });

  it("refuses a permission category that does not exist as a failed create, naming it and the known ones", async () => {
    const host = await hostOf(PROVIDER_MODULE, "ApiKey");
    await expect(host.create({ permissions: { api: { teleport: {} } } })).rejects.toThrow(/Unknown permission categories: teleport\. Known: misc, /);
  });
});

describe("Endpoint and WorkerGroup through the real provider host", () => {
  it("refuse at check (what preview shows) a maxWorkers below coldWorkers, a targetUtil outside (0, 1], a group without a template or an endpoint, each naming the input", async () => {
    const endpoint = await hostOf(PROVIDER_MODULE, "Endpoint");
    const failures = (await endpoint.check({}, { name: "llm", coldWorkers: 4, maxWorkers: 2, targetUtil: 1.5 })).failures;
    expect(failures).toHaveLength(2);
    expect(failures).toEqual(
      expect.arrayContaining([
        { property: "targetUtil", reason: expect.stringContaining("a share of active capacity, in (0, 1]") },
        { property: "maxWorkers", reason: expect.stringContaining("maxWorkers is below coldWorkers") },
      ]),
    );
    expect((await endpoint.check({}, { name: "llm", coldWorkers: 1, maxWorkers: 2 })).failures).toEqual([]);
    const group = await hostOf(PROVIDER_MODULE, "WorkerGroup");
    expect((await group.check({}, { endpointId: 1 })).failures.map((f) => f.property)).toEqual(["templateHash"]);
    expect((await group.check({}, { templateHash: "abc" })).failures.map((f) => f.property)).toEqual(["endpointId"]);
  });
});
