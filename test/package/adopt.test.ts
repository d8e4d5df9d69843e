import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";
import { PROJECT } from "./own-program";

// Every kind adopted by id: what the program declares must match what cannot change; the rest is made so.
const PROGRAM = `const pulumi = require("@pulumi/pulumi");
const { ApiKey, Instance, NetworkVolume, Template } = require("gpu-rental/provider");

const config = new pulumi.Config();
const template = new Template("base", { adoptId: config.requireNumber("templateId"), name: "made-elsewhere", image: "nvidia/cuda", desc: "adopted" });
const volume = new NetworkVolume("data", { adoptId: config.requireNumber("volumeId"), size: 20, name: "by-hand" });
const key = new ApiKey("reader", { adoptId: config.requireNumber("keyId"), name: "by-hand", permissions: { api: { instance_read: {} } } });
const worker = new Instance("worker", { adoptId: config.requireNumber("instanceId"), image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", label: "adopted" });

exports.ids = { template: template.templateId, volume: volume.volumeId, key: key.keyId, instance: worker.instanceId };
exports.readerKey = key.key;
`;

describe("adopting objects made elsewhere", () => {
  let emu: TestEmulator;
  let program: UserProgram;

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 } });
    program = await UserProgram.create("adopt", { "Pulumi.yaml": PROJECT("adopt", false), "index.js": PROGRAM }, ["gpu-rental", "@pulumi/pulumi@3.248.0"]);
  }, 300_000);
  afterAll(async () => {
    await emu.close();
    program.remove();
  });

  it("takes an instance, a template, a volume and a key under management, then changes nothing, then destroys them", async () => {
    // Made by hand (a script, the console): the service knows them, no stack does.
    const client = emu.client();
    const template = await client.templates.create({ name: "made-elsewhere", image: "nvidia/cuda", docker_login_repo: "", docker_login_user: "", docker_login_pass: "" });
    const [volumeOffer] = await client.volumes.searchNetworkOffers({ disk_space: { gte: 20 } });
    const volume = await client.volumes.createNetwork({ offerId: volumeOffer.ask_contract_id, size: 20, name: "by-hand" });
    const key = await client.apiKeys.create({ name: "by-hand", permissions: { api: { instance_read: {} } } });
    const [offer] = await client.offers.search({ filters: { rentable: { eq: true } }, limit: 1 });
    const instance = await client.instances.create(offer.id, { image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", label: "made-by-hand" });
    const counts = () => [emu.marketplace.instances.all().length, emu.marketplace.volumes.list(emu.marketplace.seededUser.id).length];

    const stack = new TestStack(`adopt-${process.pid}`, {}, program.dir);
    try {
      const ids = { templateId: template.id, volumeId: volume.id, keyId: key.id, instanceId: instance.new_contract };
      await stack.init({ "gpu-rental:apiUrl": emu.url, ...Object.fromEntries(Object.entries(ids).map(([k, v]) => [k, String(v)])) }, { "gpu-rental:apiKey": emu.apiKey });
      expect(await stack.ok("up", "--yes")).toMatch(/\+ 5 created/);
      expect(counts()).toEqual([1, 1]);
      expect((await stack.outputs()).ids).toEqual({ template: template.id, volume: volume.id, key: key.id, instance: instance.new_contract });
      // What could be changed was made as declared, in place.
      expect(emu.marketplace.instances.all()[0].label).toBe("adopted");
      expect(emu.marketplace.templates.search(emu.marketplace.seededUser.id, { id: { eq: template.id } })[0].content).toMatchObject({ desc: "adopted" });

      expect(await stack.ok("up", "--yes", "--expect-no-changes")).toMatch(/5 unchanged/);

      expect(await stack.ok("destroy", "--yes")).toMatch(/- 5 deleted/);
      expect(counts()).toEqual([0, 0]);
      expect(emu.marketplace.accounts.keysOf(emu.marketplace.seededUser.id).map((k) => k.id)).not.toContain(key.id);
      expect(emu.marketplace.templates.search(emu.marketplace.seededUser.id, { id: { eq: template.id } })).toEqual([]);
    } finally {
      await stack.dispose();
    }
  }, 300_000);

  it("refuses to adopt what does not exist, or does not match what cannot change, creating nothing", async () => {
    const stack = new TestStack(`adopt-bad-${process.pid}`, {}, program.dir);
    const client = emu.client();
    const [volumeOffer] = await client.volumes.searchNetworkOffers({ disk_space: { gte: 30 } });
    const wrongSize = await client.volumes.createNetwork({ offerId: volumeOffer.ask_contract_id, size: 30, name: "by-hand" });
    const template = await client.templates.create({ name: "made-elsewhere", image: "nvidia/cuda", docker_login_repo: "", docker_login_user: "", docker_login_pass: "" });
    const key = await client.apiKeys.create({ name: "by-hand" });
    try {
      const ids = { templateId: template.id, volumeId: wrongSize.id, keyId: key.id, instanceId: 987654 };
      await stack.init({ "gpu-rental:apiUrl": emu.url, ...Object.fromEntries(Object.entries(ids).map(([k, v]) => [k, String(v)])) }, { "gpu-rental:apiKey": emu.apiKey });
      // Without --continue-on-error the engine starts no new step after the first failure, and which
      // adoption fails first is a race: each must be seen refusing on its own.
      const result = await stack.run("up", "--yes", "--continue-on-error");
      const output = result.stdout + result.stderr;
      expect(result.code).not.toBe(0);
      expect(output).toMatch(/Instance 987654 cannot be adopted: the account has no instance 987654/);
      expect(output).toMatch(/its size is 30 GB, the program declares size 20/);
      expect(output).toMatch(/API key \d+ cannot be adopted as declared: its permissions are/);
      expect(emu.marketplace.instances.all()).toEqual([]);
    } finally {
      await stack.dispose();
    }
  }, 300_000);
});
