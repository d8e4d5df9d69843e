import * as fs from "node:fs";
import * as path from "node:path";
import { FUNCTIONS, KINDS, REGISTRY } from "../../provider/lifecycle";
import { generatedFiles } from "../../release/generate/generate";
import { packageSchema } from "../../provider/schema/schema";
import { REPO_ROOT } from "../helpers/paths";

// One description per kind, derived from its zod schemas: the schema, the TypeScript argument types and the reference page come from it.
describe("the resource descriptions", () => {
  it("made the generated files as they are committed (run `npm run gen:resources` after changing a description)", () => {
    for (const [file, text] of Object.entries(generatedFiles())) {
      expect({ file, text: fs.readFileSync(path.join(REPO_ROOT, file), "utf8") }).toEqual({ file, text });
    }
  });

  // That each describes exactly the inputs its lifecycle validates: test/provider/describe.test.ts (it is derived from them).
  it("are the registry's, in its order, and give an example of each function that passes its check", () => {
    expect([...REGISTRY.kinds.keys()]).toEqual(KINDS.map((kind) => kind.description.name));
    expect([...REGISTRY.functions.keys()]).toEqual(FUNCTIONS.map((fn) => fn.description.name));
    for (const { description, args } of FUNCTIONS) {
      const name = description.name;
      // The example's arguments are the function's own, and pass its check.
      expect({ name, unknown: Object.keys(description.example.args).filter((arg) => !args.keys.includes(arg)) }).toEqual({ name, unknown: [] });
      expect({ name, failures: args.check(description.example.args) }).toEqual({ name, failures: [] });
    }
  });

  // Generated SDKs (Python's) fill in a declared default the program left out: the lifecycle must see no change.
  it("declare only defaults the lifecycle itself applies: a default filled in is no change", async () => {
    for (const { description, diff } of KINDS) {
      for (const [input, p] of Object.entries(description.inputs)) {
        if (p.default === undefined) continue;
        const kind = description.name;
        expect({ kind, input, changes: (await diff({}, { [input]: p.default })).changes }).toEqual({ kind, input, changes: false });
      }
    }
  });

  it("are each named on the pages that list what the package has (README, resources, plugin, YAML)", () => {
    const names = [...KINDS.map((kind) => kind.description.name), ...FUNCTIONS.map((fn) => fn.description.name)];
    for (const page of ["README.md", "docs/resources.md", "docs/plugin.md", "docs/yaml.md"]) {
      const text = fs.readFileSync(path.join(REPO_ROOT, page), "utf8");
      expect([page, names.filter((name) => !new RegExp(`\\b${name}\\b`).test(text))]).toEqual([page, []]);
    }
  });

  it("give a schema with the secrets marked, enums and objects declared once, and the Python package name", () => {
    const schema = packageSchema("1.2.3") as any;
    expect(schema.language.python.packageName).toBe("pulumi_gpu_rental");
    expect(Object.keys(schema.resources).sort()).toEqual(
      [
        "gpu-rental:index:ApiKey", "gpu-rental:index:EnvVar", "gpu-rental:index:GpuFleet", "gpu-rental:index:Instance", "gpu-rental:index:LocalVolume", "gpu-rental:index:NetworkVolume", "gpu-rental:index:SshKey",
        "gpu-rental:index:Subaccount", "gpu-rental:index:Team", "gpu-rental:index:TeamMember", "gpu-rental:index:TeamRole", "gpu-rental:index:Template", "gpu-rental:index:Webhook",
        "gpu-rental:index:Endpoint", "gpu-rental:index:WorkerGroup",
      ].sort(),
    );
    expect(Object.keys(schema.functions)).toEqual(
      ["getOffers", "getTemplates", "getInstance", "getInstances", "getNetworkVolumeOffers", "getLocalVolumeOffers", "getEnvVars", "getUser", "getSshKeys", "getInvoices", "getTeamRoles", "getEndpoints", "getEndpointWorkers", "getAuditLogs", "getGpuPrices"].map((name) => `gpu-rental:index:${name}`),
    );
    expect(schema.functions["gpu-rental:index:getOffers"].outputs.properties.offers.items).toEqual({ $ref: "#/types/gpu-rental:index:Offer" });
    const secrets = Object.entries(schema.resources).flatMap(([type, r]: [string, any]) =>
      Object.entries(r.properties).filter(([, p]: [string, any]) => p.secret).map(([name]) => `${type.split(":")[2]}.${name}`),
    );
    expect(secrets.sort()).toEqual(
      ["ApiKey.key", "Endpoint.apiKey", "EnvVar.value", "GpuFleet.imageLogin", "GpuFleet.instanceApiKeys", "Instance.imageLogin", "Instance.instanceApiKey", "Subaccount.password", "Template.dockerLoginPass", "Webhook.secret"],
    );
    expect(schema.provider.inputProperties.apiKey.secret).toBe(true);
    expect(schema.config.variables.apiKey.secret).toBe(true);
    const instance = schema.resources["gpu-rental:index:Instance"];
    expect(instance.inputProperties.targetState).toMatchObject({ $ref: "#/types/gpu-rental:index:TargetState", default: "running" });
    expect(schema.types["gpu-rental:index:Runtype"].enum.map((e: any) => e.value)).toContain("ssh_direct");
    expect(schema.types["gpu-rental:index:InstanceVolume"].required).toEqual(["mountPath"]);
    // Every reference points at a declared type.
    const refs = [...JSON.stringify(schema).matchAll(/"#\/types\/([^"]+)"/g)].map((m) => m[1]);
    for (const ref of refs) expect(schema.types).toHaveProperty([ref]);
  });
});
