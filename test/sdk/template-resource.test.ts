import { GpuRentalError } from "../../sdk";
import { INSTANCE, TEMPLATE, direct } from "../../provider/lifecycle";
import { diffTemplateSpec } from "../../provider/lifecycle/template";
import { emulator, TestEmulator } from "../helpers/emulator";

const Instance = direct(INSTANCE);
const Template = direct(TEMPLATE);

const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
const base = { name: "trainer", image: "pytorch/pytorch", tag: "2.4.0", runtype: "ssh", sshDirect: true, useSsh: true };

describe("diffTemplateSpec", () => {
  it("changes every field in place", () => {
    const news = { ...base, tag: "2.5.0", env: "-e A=1", extraFilters: { gpu_ram: { gte: 24000 } }, private: true, dockerLoginPass: "t" };
    expect(diffTemplateSpec(base, news)).toEqual({
      changes: true,
      updates: ["tag", "env", "dockerLoginPass", "extraFilters", "private"],
      replaces: [],
      deleteBeforeReplace: false,
    });
  });

  it("sees no change in writing a default explicitly, in key order, or in outputs", () => {
    const olds = { ...base, templateId: 4, hashId: "abc", extraFilters: { a: 1, b: 2 } };
    const news = { ...base, desc: "", recommendedDiskSpace: 8, jupyterDir: null, private: false, extraFilters: { b: 2, a: 1 } };
    expect(diffTemplateSpec(olds, news).changes).toBe(false);
  });

  it("counts an unknown value (preview) as a change", () => {
    expect(diffTemplateSpec(base, { ...base, image: UNKNOWN }, UNKNOWN).updates).toEqual(["image"]);
  });
});

describe("checkTemplateInputs", () => {
  it("names each bad input, as the service would refuse it", () => {
    const { failures } = Template.check({ name: "", image: "i", runtype: "telnet", recommendedDiskSpace: -1 });
    expect(failures.map((f) => f.property).sort()).toEqual(["name", "recommendedDiskSpace", "runtype"]);
    expect(failures.find((f) => f.property === "runtype")!.reason).toMatch(/runtype: .*"ssh"/);
  });

  it("requires name and image, and leaves unknown inputs for later", () => {
    expect(Template.check({}).failures.map((f) => f.property).sort()).toEqual(["image", "name"]);
    expect(Template.check({ name: UNKNOWN, image: "i" }, UNKNOWN).failures).toEqual([]);
  });
});

describe("template resource over HTTP", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator();
  });
  afterAll(() => emu.close());
  const options = () => ({ client: emu.client() });
  const byId = async (id: string) => (await emu.client().templates.search({ id: { eq: Number(id) } }))[0];

  it("creates, reads, updates in place (new hash, same id) and deletes", async () => {
    const { id, outs } = await Template.create({ ...base, dockerLoginUser: "me", dockerLoginPass: "token-1" }, options());
    expect(outs).toMatchObject({ ...base, templateId: Number(id), hashId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(await byId(id)).toMatchObject({ name: "trainer", tag: "2.4.0", runtype: "ssh", docker_login_pass: "token-1", private: false });

    expect(await Template.read(id, outs, options())).toMatchObject({ templateId: Number(id), hashId: outs.hashId, desc: "", tag: "2.4.0" });

    const news = { ...base, tag: "2.5.0", desc: "newer", dockerLoginUser: "me", dockerLoginPass: "token-1" };
    const updated = await Template.update(id, outs, news, options());
    expect(updated).toMatchObject({ templateId: Number(id), tag: "2.5.0" });
    expect(updated.hashId).not.toBe(outs.hashId);
    expect(await byId(id)).toMatchObject({ hash_id: updated.hashId, tag: "2.5.0", desc: "newer" });
    expect(diffTemplateSpec(updated, news).changes).toBe(false);

    await Template.delete(id, options());
    expect(await byId(id)).toBeUndefined();
    expect(await Template.read(id, updated, options())).toBeNull();
    await Template.delete(id, options()); // already gone: still fine
  });

  it("puts an input the program dropped back to its default", async () => {
    const { id, outs } = await Template.create({ ...base, name: "dropped", onstart: "nvidia-smi", private: true }, options());
    const updated = await Template.update(id, outs, { ...base, name: "dropped" }, options());
    expect(await byId(id)).toMatchObject({ onstart: "", private: false, hash_id: updated.hashId });
    await Template.delete(id, options());
  });

  it("reads a change made elsewhere, so the next diff puts it back", async () => {
    const { id, outs } = await Template.create({ ...base, name: "drift" }, options());
    await Template.update(id, outs, { ...base, name: "drift", tag: "by-hand" }, options());
    const read = (await Template.read(id, outs, options()))!;
    expect(read).toMatchObject({ tag: "by-hand", templateId: Number(id) });
    expect(diffTemplateSpec(read, { ...base, name: "drift" }).updates).toEqual(["tag"]);
    // The stale hash of the state does not matter: the update finds the template by its id.
    const restored = await Template.update(id, { ...read, hashId: outs.hashId }, { ...base, name: "drift" }, options());
    expect(await byId(id)).toMatchObject({ tag: "2.4.0", hash_id: restored.hashId });
    await Template.delete(id, options());
  });

  it("refuses bad input before anything is sent, and reports a template gone before an update", async () => {
    await expect(Template.create({ name: "x", image: "" }, options())).rejects.toThrow(/Invalid Template: image/);
    await expect(Template.update("999999", { ...base, templateId: 999999 }, { ...base, tag: "x" }, options())).rejects.toThrow(
      GpuRentalError,
    );
    await expect(Template.update("999999", base, { ...base, tag: "x" }, options())).rejects.toThrow(/no longer exists.*refresh/);
  });

  it("reports the service's refusal with its message", async () => {
    await expect(Template.create({ ...base, env: "-e NOVALUE" }, options())).rejects.toThrow(/invalid_args.*NOVALUE/);
  });
});

describe("an instance created from a template resource", () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator({ lifecycle: { provisioningMs: 0, loadingMs: 0 } });
  });
  afterAll(() => emu.close());

  it("takes the template's image, runtype and disk unless it sets its own", async () => {
    const client = emu.client();
    const template = await Template.create({ ...base, name: "base", recommendedDiskSpace: 16 }, { client });
    const { id, outs } = await Instance.create({ gpuModel: "RTX 4090", templateHashId: template.outs.hashId }, { client });
    expect(outs).toMatchObject({ status: "running", templateHashId: template.outs.hashId });
    const instance = emu.marketplace.instances.all().find((i) => i.id === Number(id))!;
    expect(instance.config).toMatchObject({ image: "pytorch/pytorch:2.4.0", runtype: "ssh_direct", disk: 16 });
    await Instance.delete(id, { client });
    await Template.delete(template.id, { client });
  });

  it("needs an image or a template", () => {
    expect(Instance.check({ gpuModel: "RTX 4090" }).failures).toEqual([
      { property: "image", reason: expect.stringMatching(/give image, or templateHashId/) },
    ]);
  });
});
