import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";
import { configureLifecycle, KINDS, ProcessStop, registryOf, UNKNOWN } from "../../provider/lifecycle";
import { GpuRentalProvider } from "../../provider/plugin/provider";
import { generatedFiles } from "../../release/generate/generate";
import { emulator, TestEmulator } from "../helpers/emulator";
import { REPO_ROOT } from "../helpers/paths";
import { GET_KEY_LINES } from "../fixtures/sixth-kind/get-key-lines";
import { INSTANCE_KEY } from "../fixtures/sixth-kind/instance-key";

/**
 * One module per kind, one registry, no module state: where each kind is named in the source, what a new kind
 * takes (one file, one registry line), and that nothing of the SDK or the provider lives in a module's variables.
 */

const rel = (file: string) => path.relative(REPO_ROOT, file).split(path.sep).join("/");
const read = (file: string) => fs.readFileSync(file, "utf8");

function sourceFiles(...dirs: string[]): string[] {
  const walk = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name);
      return entry.isDirectory() ? walk(full) : entry.name.endsWith(".ts") ? [full] : [];
    });
  return dirs.flatMap((dir) => walk(path.join(REPO_ROOT, dir))).sort();
}

describe("one module per kind", () => {
  it("lists, for each kind, the files that name it: its one lifecycle module, the generated classes, and the reading of stack states", () => {
    const files = sourceFiles("sdk", "provider", "emulator", "cli");
    const naming = Object.fromEntries(
      KINDS.map(({ description: { name } }) => [name, files.filter((file) => read(file).includes(`"${name}"`)).map(rel)]),
    );
    expect(naming).toEqual({
      Instance: ["provider/generated/resources.ts", "provider/lifecycle/instance.ts", "sdk/workflows/stack-holdings.ts"],
      Template: ["provider/generated/resources.ts", "provider/lifecycle/template.ts"],
      NetworkVolume: ["provider/generated/resources.ts", "provider/lifecycle/network-volume.ts", "sdk/workflows/stack-holdings.ts"],
      LocalVolume: ["provider/generated/resources.ts", "provider/lifecycle/local-volume.ts", "sdk/workflows/stack-holdings.ts"],
      ApiKey: ["provider/generated/resources.ts", "provider/lifecycle/api-key.ts", "sdk/workflows/stack-holdings.ts"],
      SshKey: ["provider/generated/resources.ts", "provider/lifecycle/ssh-key.ts"],
      EnvVar: ["provider/generated/resources.ts", "provider/lifecycle/env-var.ts"],
      GpuFleet: ["provider/generated/resources.ts", "provider/lifecycle/gpu-fleet.ts", "sdk/workflows/stack-holdings.ts"],
      Team: ["provider/generated/resources.ts", "provider/lifecycle/team.ts"],
      TeamRole: ["provider/generated/resources.ts", "provider/lifecycle/team-role.ts"],
      TeamMember: ["provider/generated/resources.ts", "provider/lifecycle/team-member.ts"],
      Subaccount: ["provider/generated/resources.ts", "provider/lifecycle/subaccount.ts"],
      Webhook: ["provider/generated/resources.ts", "provider/lifecycle/webhook.ts"],
      Endpoint: ["provider/generated/resources.ts", "provider/lifecycle/endpoint.ts"],
      WorkerGroup: ["provider/generated/resources.ts", "provider/lifecycle/worker-group.ts"],
      Deployment: ["provider/generated/resources.ts", "provider/lifecycle/deployment.ts"],
    });
    // Exactly one lifecycle module per kind, named after it, defining its description.
    for (const { description: { name } } of KINDS) {
      const modules = naming[name].filter((file) => file.startsWith("provider/lifecycle/"));
      const kebab = name.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase();
      expect({ name, modules }).toEqual({ name, modules: [`provider/lifecycle/${kebab}.ts`] });
      expect(read(path.join(REPO_ROOT, modules[0]))).toMatch(new RegExp(`name: "${name}"`));
    }
    // The shells name no kind: they only adapt the lifecycle.
    for (const shell of ["provider/sdk-provider.ts", "provider/dynamic-provider.ts", "provider/plugin/provider.ts", "provider/resource-options.ts", "provider/index.ts"]) {
      const text = read(path.join(REPO_ROOT, shell));
      expect({ shell, names: KINDS.map((k) => k.description.name).filter((name) => text.includes(`"${name}"`)) }).toEqual({ shell, names: [] });
    }
  });
});

describe("a sixth kind and a function, added in a test fixture", () => {
  // The one registry line: the package's kinds and functions, and the fixture's.
  const registry = registryOf([...KINDS, INSTANCE_KEY], [GET_KEY_LINES]);
  const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl sixth@kind";

  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await emulator();
  });
  afterAll(() => emu.close());

  it("is one file each: the schema, the TypeScript class and the reference page follow from the registry", () => {
    const files = generatedFiles(registry);
    const schema = JSON.parse(files["schema.json"]);
    expect(schema.resources["gpu-rental:index:InstanceKey"]).toMatchObject({
      inputProperties: { instanceId: { type: "integer" }, publicKey: { type: "string" } },
      requiredInputs: ["instanceId", "publicKey"],
    });
    expect(schema.functions["gpu-rental:index:getKeyLines"]).toMatchObject({ outputs: { properties: { publicKeys: { type: "array" } } } });
    expect(files["provider/generated/resources.ts"]).toMatch(/export class InstanceKey extends pulumi\.CustomResource/);
    expect(files["provider/generated/resources.ts"]).toMatch(/export function getKeyLinesOutput\(/);
    expect(files["docs/reference.md"]).toMatch(/## InstanceKey\n[\s\S]*## getKeyLines \(function\)[\s\S]*gpu_rental\.get_key_lines\(\)/);
    // The package's own files stay as committed: the fixture is in no registry but the test's.
    expect(generatedFiles()["schema.json"]).not.toContain("InstanceKey");
    expect(generatedFiles()["schema.json"]).not.toContain("getKeyLines");
  });

  it("is served by the plugin's shell as it is, over the emulator: check, create, read, delete, and the function", async () => {
    const stop = new ProcessStop();
    const provider = new GpuRentalProvider("0.0.0", stop, registry);
    provider.configured(configureLifecycle({ get: (key) => ({ "gpu-rental:apiUrl": emu.url, "gpu-rental:apiKey": emu.apiKey })[key] }, { stop, registry }));
    const client = emu.client();
    const [offer] = await client.offers.search({ limit: 1 });
    const { new_contract: instanceId } = await client.instances.create(offer.id, { image: "x", runtype: "ssh_direct" });
    await client.sshKeys.add(KEY);
    const urn = "urn:pulumi:dev::proj::gpu-rental:index:InstanceKey::deploy";
    expect((await provider.check(urn, {}, { instanceId, publicKey: "" })).failures?.map((f) => f.property)).toEqual(["publicKey"]);
    const { inputs } = await provider.check(urn, {}, { instanceId, publicKey: KEY });
    const { id, outs } = await provider.create(urn, inputs ?? {});
    expect(outs).toMatchObject({ keyId: Number(id!.split("/")[1]), publicKey: KEY });
    expect((await provider.read(id!, urn, outs!)).props ?? {}).toMatchObject({ keyId: outs!.keyId });
    expect(await provider.invoke("gpu-rental:index:getKeyLines", {})).toEqual({ outputs: { publicKeys: [KEY] } });
    expect(await provider.diff(id!, urn, outs!, { ...outs, publicKey: UNKNOWN })).toMatchObject({ replaces: ["publicKey"] });
    await provider.delete(id!, urn, outs!);
    expect(await client.sshKeys.ofInstance(instanceId)).toEqual([]);
    await client.instances.destroy(instanceId);
  });
});

describe("no module-level mutable state in the SDK or the provider", () => {
  it("finds no top-level let or var, and no Map, Set or other mutable object made at module level, in sdk/ and provider/", () => {
    const found: string[] = [];
    for (const file of sourceFiles("sdk", "provider").filter((f) => !rel(f).startsWith("provider/generated/"))) {
      const source = ts.createSourceFile(file, read(file), ts.ScriptTarget.ES2022, true);
      for (const statement of source.statements) {
        if (!ts.isVariableStatement(statement)) continue;
        const where = `${rel(file)}:${source.getLineAndCharacterOfPosition(statement.getStart()).line + 1}`;
        if (!(statement.declarationList.flags & ts.NodeFlags.Const)) found.push(`${where} top-level ${statement.declarationList.getText().split(" ")[0]}`);
        for (const made of constructedAtTopLevel(statement)) found.push(`${where} new ${made}`);
      }
    }
    expect(found).toEqual([]);
  });
});

/** What a top-level statement constructs outside any function (mutable containers and controllers). */
function constructedAtTopLevel(node: ts.Node): string[] {
  if (ts.isFunctionLike(node) || ts.isClassLike(node)) return [];
  const own = ts.isNewExpression(node) && /^(Map|Set|WeakMap|WeakSet|AbortController|Array)$/.test(node.expression.getText()) ? [node.expression.getText()] : [];
  return [...own, ...node.getChildren().flatMap(constructedAtTopLevel)];
}
