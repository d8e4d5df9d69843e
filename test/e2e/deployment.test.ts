import * as fs from "node:fs";
import * as path from "node:path";
import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { REPO_ROOT } from "../helpers/paths";
import { TestStack } from "../helpers/pulumi-stack";

/**
 * A Deployment as code in TypeScript: examples/deployment's program through the real engine, against an emulator
 * without machines (a worker serves once its instance runs; test/compat/deployments.test.ts runs the code on real
 * workers). Up, a second up that changes nothing, a code change that is one update and a new version, bad input
 * refused at preview with nothing made, and a destroy that leaves nothing (the import by id goes through the plugin:
 * test/package/deployment.test.ts).
 */
const EXAMPLE = path.join(REPO_ROOT, "examples", "deployment");

function writeProject(): string {
  const parent = path.join(REPO_ROOT, ".gpu-rental");
  fs.mkdirSync(parent, { recursive: true });
  const dir = fs.mkdtempSync(path.join(parent, "e2e-deployment-"));
  fs.copyFileSync(path.join(EXAMPLE, "index.ts"), path.join(dir, "index.ts"));
  fs.cpSync(path.join(EXAMPLE, "code"), path.join(dir, "code"), { recursive: true });
  fs.writeFileSync(path.join(dir, "Pulumi.yaml"), fs.readFileSync(path.join(EXAMPLE, "Pulumi.yaml"), "utf8") + "main: index.ts\n");
  fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "ES2022", module: "node16", moduleResolution: "node16", strict: true, skipLibCheck: true, types: ["node"] } }));
  return dir;
}

describe("a Deployment in TypeScript (examples/deployment) through the real engine", () => {
  let emu: TestEmulator;
  let stack: TestStack;
  let dir: string;

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 50 } });
    dir = writeProject();
    stack = new TestStack(`deployment-${process.pid}`, {}, dir);
    await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey });
  }, 120_000);
  afterAll(async () => {
    await stack?.dispose();
    await emu?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it("up, up again with no change, a code change as one update and a new version, bad input refused at preview, destroy leaves nothing", async () => {
    const client = emu.client();
    expect(await stack.ok("up", "--yes")).toMatch(/\+ 2 created/);
    const first = await stack.outputs();
    const made = (await client.deployments.get(first.deploymentId))!;
    expect(made).toMatchObject({ name: "square", tag: "default", endpoint_id: first.endpointId, current_version_id: first.currentVersionId });
    await stack.ok("up", "--yes", "--skip-preview=false", "--expect-no-changes");

    fs.appendFileSync(path.join(dir, "code", "__init__.py"), "\n\n@app.remote\nasync def cube(x):\n    return x * x * x\n");
    expect(await stack.ok("up", "--yes", "--skip-preview=false")).toMatch(/~ 1 updated/);
    const second = await stack.outputs();
    expect(second.deploymentId).toBe(first.deploymentId);
    expect(second.currentVersionId).not.toBe(first.currentVersionId);
    expect((await client.deployments.versions(first.deploymentId)).map((v) => v.id)).toEqual([first.currentVersionId, second.currentVersionId]);

    // Bad input, refused at preview, nothing made: an empty code folder, scaling out of range, criteria that do not read.
    fs.mkdirSync(path.join(dir, "empty"));
    fs.writeFileSync(path.join(dir, "index.ts"), fs.readFileSync(path.join(dir, "index.ts"), "utf8") +
      'new Deployment("bad", { name: "bad", codeFolder: path.join(__dirname, "empty"), image: "img", targetUtil: 2, searchParams: "gpu_name=" });\n');
    const refused = await stack.run("preview");
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(/codeFolder: the code folder .*empty has no files/);
    expect(refused.stdout + refused.stderr).toMatch(/targetUtil/);
    expect(refused.stdout + refused.stderr).toMatch(/searchParams/);
    expect((await client.deployments.list()).map((d) => d.name)).toEqual(["square"]);

    await stack.ok("destroy", "--yes");
    expect(await client.deployments.list()).toEqual([]);
    expect(await client.endpoints.list()).toEqual([]);
    expect(await client.workerGroups.list()).toEqual([]);
    expect(await client.instances.list()).toEqual([]);
  }, 300_000);
});
