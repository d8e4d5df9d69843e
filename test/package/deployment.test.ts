import * as fs from "node:fs";
import * as path from "node:path";
import { Clock } from "../../emulator";
import { pushDeployment, remoteClientEnv } from "../../sdk";
import { emulator, TestEmulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";
import { pythonPluginProgram } from "./python-plugin-program";
import { UserProgram } from "../helpers/user-program";

/**
 * A Deployment in Python through the plugin (the packed package's plugin folder named in Pulumi.yaml, the Python SDK
 * generated from it), against an emulator without machines: up, a second up that changes nothing, a code change
 * that is one update and a new version, `pulumi import` of a deployment made by hand, and a destroy that leaves
 * nothing. test/e2e/deployment.test.ts runs the TypeScript program; test/compat/deployments.test.ts real workers.
 */
const PROGRAM = `import os
import pulumi
import pulumi_gpu_rental as gpu_rental

here = os.path.dirname(os.path.abspath(__file__))
square = gpu_rental.Deployment("square", name="py-square", code_folder=os.path.join(here, "code"), image="vastai/base-image:latest",
                               environment={"NOTE": "python"}, min_load=1, cold_workers=0, max_workers=1)
pulumi.export("deployment_id", square.deployment_id)
pulumi.export("current_version_id", square.current_version_id)
`;
const CODE = 'from vastai.serverless.remote import Deployment\n\napp = Deployment(name="py-square")\n\n\n@app.remote(benchmark_dataset=[{"x": 3}])\nasync def square(x):\n    return x * x\n';

describe("a Deployment in Python through the plugin", () => {
  let emu: TestEmulator;
  let program: UserProgram;
  let stack: TestStack;

  beforeAll(async () => {
    [emu, program] = await Promise.all([emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 50 } }), pythonPluginProgram("py-deployment", { "__main__.py": PROGRAM, "code/__init__.py": CODE })]);
    stack = new TestStack(`py-deployment-${process.pid}`, {}, program.dir);
    await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey });
  }, 600_000);
  afterAll(async () => {
    await stack?.dispose();
    await emu?.close();
    program?.remove();
  }, 120_000);

  it("up, up again with no change, a code change as one update and a new version, import by id, destroy leaves nothing", async () => {
    const client = emu.client();
    expect(await stack.ok("up", "--yes")).toMatch(/\+ 2 created/);
    const first = await stack.outputs();
    expect(await client.deployments.get(first.deployment_id)).toMatchObject({ name: "py-square", env: remoteClientEnv({ apiUrl: emu.url }), current_version_id: first.current_version_id });
    await stack.ok("up", "--yes", "--skip-preview=false", "--expect-no-changes");

    fs.appendFileSync(path.join(program.dir, "code", "__init__.py"), "\n\n@app.remote\nasync def cube(x):\n    return x * x * x\n");
    expect(await stack.ok("up", "--yes", "--skip-preview=false")).toMatch(/~ 1 updated/);
    const second = await stack.outputs();
    expect(second.deployment_id).toBe(first.deployment_id);
    expect((await client.deployments.versions(first.deployment_id)).map((v) => v.id)).toEqual([first.current_version_id, second.current_version_id]);

    const hand = await pushDeployment(client, { name: "by-hand", codeFolder: path.join(program.dir, "code"), image: "vastai/base-image:latest", scaling: { cold_workers: 0, max_workers: 1 } });
    expect(await stack.ok("import", "gpu-rental:index:Deployment", "by-hand", String(hand.deployment.id), "--protect=false", "--yes")).toMatch(/1 imported/);
    const state = JSON.parse(await stack.ok("stack", "export"));
    const imported = state.deployment.resources.find((r: any) => r.type === "gpu-rental:index:Deployment" && r.id === String(hand.deployment.id));
    expect(imported.outputs).toMatchObject({ name: "by-hand", tag: "default", image: "vastai/base-image:latest", deploymentId: hand.deployment.id, maxWorkers: 1 });
    // The criteria the push sent are only the service client's defaults: the imported inputs name none.
    expect(imported.inputs).not.toHaveProperty("searchParams");

    await stack.ok("destroy", "--yes");
    expect(await client.deployments.list()).toEqual([]);
    expect(await client.endpoints.list()).toEqual([]);
    expect(await client.workerGroups.list()).toEqual([]);
    expect(await client.instances.list()).toEqual([]);
  }, 600_000);
});
