import * as fs from "node:fs";
import * as path from "node:path";
import { Clock } from "../../emulator";
import { GpuRentalClient } from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";
import { REPO_ROOT } from "../helpers/paths";
import { TestStack } from "../helpers/pulumi-stack";

/**
 * A small program of its own, written at test time inside the repository's ignored `.gpu-rental/`, so that
 * `gpu-rental/provider` resolves to this package (its self-reference) and @pulumi/pulumi to its node_modules.
 */
const PROGRAM = `
import * as pulumi from "@pulumi/pulumi";
import { ApiKey, EnvVar, Instance, NetworkVolume, Template, Webhook } from "gpu-rental/provider";

const config = new pulumi.Config();
const template = new Template("base", {
  name: "e2e-base",
  image: "nvidia/cuda",
  tag: "12.4.1-runtime-ubuntu22.04",
  desc: config.get("desc") ?? "first",
  runtype: "ssh",
  sshDirect: true,
  useSsh: true,
  recommendedDiskSpace: 16,
  dockerLoginUser: "bot",
  dockerLoginPass: config.requireSecret("registryToken"),
});
const volume = new NetworkVolume("data", { q: { verified: { eq: true } }, size: 20, name: "e2e-data" });
const reader = new ApiKey("reader", { name: "e2e-reader", permissions: { api: { instance_read: {} } } });
const worker = new Instance("worker", { gpuModel: "RTX 4090", templateHashId: template.hashId, label: "e2e-worker" });
const token = new EnvVar("hf", { name: "hf_token", value: config.requireSecret("registryToken") });
const hook = new Webhook("ops", { url: "https://hooks.example.com/e2e", eventTypes: ["client:outbid"], name: "ops" });

export const templateId = template.templateId;
export const hashId = template.hashId;
export const volumeId = volume.volumeId;
export const volumeStatus = volume.status;
export const keyId = reader.keyId;
export const readerKey = reader.key;
export const instanceId = worker.instanceId;
export const envVarKey = token.key;
export const webhookSecret = hook.secret;
`;

const PROJECT = `name: gpu-rental-e2e-resources
runtime:
  name: nodejs
  options:
    typescript: true
main: index.ts
`;

const TSCONFIG = { compilerOptions: { target: "ES2022", module: "node16", moduleResolution: "node16", strict: true, skipLibCheck: true, types: ["node"] } };
const REGISTRY_TOKEN = "registry-token-e2e-do-not-store";

function writeProject(): string {
  const parent = path.join(REPO_ROOT, ".gpu-rental");
  fs.mkdirSync(parent, { recursive: true });
  const dir = fs.mkdtempSync(path.join(parent, "e2e-resources-"));
  fs.writeFileSync(path.join(dir, "Pulumi.yaml"), PROJECT);
  fs.writeFileSync(path.join(dir, "index.ts"), PROGRAM);
  fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG));
  return dir;
}

describe("Template, NetworkVolume, ApiKey, EnvVar, Webhook and a templated Instance through the real engine", () => {
  let emu: TestEmulator;
  let stack: TestStack;
  let projectDir: string;
  const instances = () => emu.marketplace.instances.all();
  /** The user's own templates: the service's seeded public ones (creator 0) left out. */
  const ownTemplates = () => emu.client().templates.search({ creator_id: { neq: 0 } });

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 100, loadingMs: 200 } });
    projectDir = writeProject();
    stack = new TestStack(`resources-${process.pid}`, {}, projectDir);
    await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey, registryToken: REGISTRY_TOKEN });
  }, 120_000);

  afterAll(async () => {
    await stack.dispose();
    await emu.close();
    fs.rmSync(projectDir, { recursive: true, force: true });
  }, 120_000);

  let first: Record<string, any>;

  it("up creates the template, the volume, the key, the account's variable, a webhook and an instance from the template", async () => {
    const out = await stack.ok("up", "--yes");
    expect(out).toMatch(/\+ 7 created/);
    first = await stack.outputs();
    const [template] = await ownTemplates();
    expect(template).toMatchObject({ id: first.templateId, hash_id: first.hashId, desc: "first", docker_login_pass: REGISTRY_TOKEN });
    expect((await emu.client().volumes.list()).map((v) => [v.id, v.name, v.disk_space])).toEqual([[first.volumeId, expect.stringMatching(/^e2e-data-gr[a-z2-7]{8}-[a-z2-7]{10}$/), 20]]);
    expect(instances()).toHaveLength(1);
    expect(instances()[0]).toMatchObject({ id: first.instanceId, label: "e2e-worker" });
    expect(instances()[0].config).toMatchObject({ template_hash_id: first.hashId, image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", disk: 16 });
    expect(first.envVarKey).toBe("HF_TOKEN");
    expect(emu.marketplace.accounts.user(emu.marketplace.seededUser.id)?.envVars).toEqual({ HF_TOKEN: REGISTRY_TOKEN });
  });

  it("a second up reports no changes", async () => {
    const out = await stack.ok("up", "--yes", "--expect-no-changes");
    expect(out).toMatch(/7 unchanged/);
  });

  it("the key is a secret output that works, within its scope", async () => {
    expect(first.readerKey).toBe("[secret]");
    const key = JSON.parse(await stack.ok("stack", "output", "readerKey", "--show-secrets", "--json"));
    const reader = new GpuRentalClient({ apiUrl: emu.url, apiKey: key, retries: 0 });
    expect((await reader.instances.list()).map((i) => i.id)).toEqual([first.instanceId]);
    await expect(reader.users.current()).rejects.toThrow(/403|401/);
    expect(stack.stateText()).not.toContain(key);
    // Only ciphertexts in state: the key (an output), the registry token (an input and an output).
    const { resources } = JSON.parse(await stack.ok("stack", "export")).deployment;
    const ofType = (type: string) => resources.find((r: any) => r.type.endsWith(`:${type}`));
    const ciphertext = expect.objectContaining({ ciphertext: expect.any(String) });
    expect(ofType("ApiKey").outputs.key).toEqual(ciphertext);
    expect(ofType("Template").inputs.dockerLoginPass).toEqual(ciphertext);
    expect(ofType("Template").outputs.dockerLoginPass).toEqual(ciphertext);
    expect(ofType("EnvVar").inputs.value).toEqual(ciphertext);
    expect(ofType("EnvVar").outputs.value).toEqual(ciphertext);
    // The webhook's secret, which the service shows once: a secret output, never in plaintext.
    expect(first.webhookSecret).toBe("[secret]");
    const secret = emu.marketplace.seededUser.webhooks![0].secret;
    expect(JSON.parse(await stack.ok("stack", "output", "webhookSecret", "--show-secrets", "--json"))).toBe(secret);
    expect(ofType("Webhook").outputs.secret).toEqual(ciphertext);
    expect(stack.stateText()).not.toContain(secret);
  });

  it("a template change is an update in place: same id, new hash; the instance made from it is replaced", async () => {
    await stack.ok("config", "set", "desc", "second");
    const out = await stack.ok("up", "--yes");
    expect(out).toMatch(/~ 1 updated/);
    expect(out).toMatch(/\+-\s*1 replaced/);
    const outputs = await stack.outputs();
    expect(outputs.templateId).toBe(first.templateId);
    expect(outputs.hashId).not.toBe(first.hashId);
    expect(outputs.volumeId).toBe(first.volumeId);
    expect(outputs.keyId).toBe(first.keyId);
    expect((await ownTemplates()).map((t) => [t.id, t.hash_id, t.desc])).toEqual([[first.templateId, outputs.hashId, "second"]]);
    expect(instances().map((i) => i.config.template_hash_id)).toEqual([outputs.hashId]);
  });

  it("destroy leaves no template of the user, no volume, no variable and no instance", async () => {
    const out = await stack.ok("destroy", "--yes");
    expect(out).toMatch(/- 7 deleted/);
    expect(emu.marketplace.seededUser.webhooks).toEqual([]);
    expect(await emu.client().envVars.list()).toEqual({});
    expect(await ownTemplates()).toEqual([]);
    expect(await emu.client().volumes.list()).toEqual([]);
    expect(instances()).toHaveLength(0);
  });

  it("never writes the registry token or the API keys in plaintext", () => {
    const state = stack.stateText();
    expect(state.length).toBeGreaterThan(1000);
    expect(state).not.toContain(REGISTRY_TOKEN);
    expect(state).not.toContain(emu.apiKey);
  });
});
