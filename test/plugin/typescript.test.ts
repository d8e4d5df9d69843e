import * as fs from "node:fs";
import * as path from "node:path";
import { pulumi } from "../../cli/pulumi";
import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";
import { typescriptPluginProgram } from "./helpers";

// A TypeScript program on the plugin (its generated SDK), not on the dynamic providers: two accounts, a secret.
const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import * as gpu from "@gpu-rental/pulumi";

const config = new pulumi.Config();
const template = new gpu.Template("base", { name: "base", image: "nvidia/cuda", desc: "v1", dockerLoginPass: "hunter2-registry-token" });
const worker = new gpu.Instance("worker", { templateHashId: template.hashId, image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", label: config.get("label") ?? "one" });
const data = new gpu.NetworkVolume("data", { size: 20, name: "data" });
const reader = new gpu.ApiKey("reader", { name: "reader", permissions: { api: { instance_read: {} } } });
const team = new gpu.Provider("team", { apiUrl: new pulumi.Config("gpu-rental").require("apiUrl"), apiKey: config.requireSecret("teamKey") });
const teamKey = new gpu.ApiKey("team-reader", { name: "team" }, { provider: team });

export const templateId = template.templateId;
export const workerId = worker.instanceId;
export const volumeId = data.volumeId;
export const readerKey = reader.key;
export const teamKeyId = teamKey.keyId;
`;

describe("the plugin in a TypeScript program (generated SDK)", () => {
  let emu: TestEmulator;
  let program: UserProgram;
  let teamUserId: number;
  let teamKey: string;

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 } });
    ({ id: teamUserId, key: teamKey } = emu.account("team@plugin.test"));
    program = await typescriptPluginProgram("plugin-ts", PROGRAM);
  }, 400_000);
  afterAll(async () => {
    await emu?.close();
    program?.remove();
  });

  it("creates, updates in place, refreshes drift, imports every kind by id, and destroys, with no key in plaintext", async () => {
    const stack = new TestStack(`plugin-ts-${process.pid}`, {}, program.dir);
    const user = emu.marketplace.seededUser.id;
    try {
      await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey, "plugin-ts:teamKey": teamKey });
      expect(await stack.ok("up", "--yes")).toMatch(/\+ 7 created/);
      const outputs = await stack.outputs();
      // Read past the transcript, which must never hold it.
      const readerKey = JSON.parse(await pulumi(stack.ws, ["stack", "output", "readerKey", "--json", "--show-secrets", "--stack", stack.name]));
      expect(readerKey).toMatch(/\w{16}/);
      expect(emu.marketplace.instances.all().map((i) => [i.id, i.ownerId, i.label])).toEqual([[outputs.workerId, user, "one"]]);
      expect(emu.marketplace.accounts.keysOf(teamUserId).map((k) => k.id)).toContain(outputs.teamKeyId);
      expect(await stack.ok("up", "--yes", "--expect-no-changes")).toMatch(/7 unchanged/);

      // A label is changed in place; a label changed elsewhere shows on refresh, and the next up puts it back.
      await stack.ok("config", "set", "label", "two");
      expect(await stack.ok("up", "--yes")).toMatch(/~ 1 updated/);
      expect(emu.marketplace.instances.all()[0].label).toBe("two");
      await emu.client().instances.update(outputs.workerId, { label: "changed-by-hand" });
      expect(await stack.ok("refresh", "--yes")).toMatch(/~ 1 updated/);
      expect(await stack.ok("up", "--yes")).toMatch(/~ 1 updated/);
      expect(emu.marketplace.instances.all()[0].label).toBe("two");

      // Made elsewhere, then imported by id: the printed code, pasted in, changes nothing.
      const made = await madeByHand(emu);
      fs.writeFileSync(path.join(program.dir, "import.json"), JSON.stringify({ resources: [
        { type: "gpu-rental:index:Template", name: "hand-template", id: String(made.template) },
        { type: "gpu-rental:index:Instance", name: "hand-instance", id: String(made.instance) },
        { type: "gpu-rental:index:NetworkVolume", name: "hand-volume", id: String(made.volume) },
        { type: "gpu-rental:index:ApiKey", name: "hand-key", id: String(made.key) },
      ] }));
      expect(await stack.ok("import", "--file", "import.json", "--out", "imported.ts", "--yes")).toMatch(/= 4 imported/);
      const code = fs.readFileSync(path.join(program.dir, "imported.ts"), "utf8");
      expect(code).toMatch(/new gpu_rental\.Instance\("hand-instance", \{[^}]*image: "nvidia\/cuda:12\.4\.1-runtime-ubuntu22\.04"/s);
      expect(code).toMatch(/new gpu_rental\.NetworkVolume\("hand-volume", \{[^}]*size: 20/s);
      fs.appendFileSync(path.join(program.dir, "index.ts"), `import * as gpu_rental from "@gpu-rental/pulumi";\n${code.replace(/^import .*$/gm, "")}`);
      expect(await stack.ok("up", "--yes", "--expect-no-changes")).toMatch(/11 unchanged/);

      // A key in plaintext config is refused before anything is touched, naming the command that encrypts it.
      await stack.ok("config", "set", "gpu-rental:apiKey", emu.apiKey);
      const plaintext = await stack.run("preview");
      expect(plaintext.code).not.toBe(0);
      expect(plaintext.stdout + plaintext.stderr).toContain("pulumi config set --secret gpu-rental:apiKey <api key>");
      await stack.ok("config", "set", "--secret", "gpu-rental:apiKey", emu.apiKey);

      await stack.ok("state", "unprotect", "--all", "--yes");
      expect(await stack.ok("destroy", "--yes")).toMatch(/- 11 deleted/);
      expect(emu.marketplace.instances.all()).toEqual([]);
      expect(emu.marketplace.volumes.list(user)).toEqual([]);
      for (const id of [outputs.templateId, made.template]) expect(await emu.client().templates.get(id)).toBeNull();
      const everything = stack.stateText() + stack.transcript.join("\n");
      for (const secret of [emu.apiKey, teamKey, "hunter2-registry-token", readerKey]) expect(everything).not.toContain(secret);
    } finally {
      await stack.dispose();
    }
  }, 600_000);
});

/** One object of each kind, made by hand (a script, the console): the service knows them, no stack does. */
async function madeByHand(emu: TestEmulator): Promise<{ template: number; instance: number; volume: number; key: number }> {
  const client = emu.client();
  const template = await client.templates.create({ name: "by-hand", image: "pytorch/pytorch", desc: "made by hand", docker_login_repo: "", docker_login_user: "", docker_login_pass: "" });
  const [volumeOffer] = await client.volumes.searchNetworkOffers({ disk_space: { gte: 20 } });
  const volume = await client.volumes.createNetwork({ offerId: volumeOffer.ask_contract_id, size: 20, name: "by-hand" });
  const key = await client.apiKeys.create({ name: "by-hand", permissions: { api: { instance_read: {} } } });
  const [offer] = await client.offers.search({ filters: { rentable: { eq: true } }, limit: 1 });
  const instance = await client.instances.create(offer.id, { image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", label: "by-hand", disk: 20 });
  return { template: template.id, instance: instance.new_contract, volume: volume.id, key: key.id };
}
