import * as fs from "node:fs";
import * as path from "node:path";
import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { REPO_ROOT } from "../helpers/paths";
import { TestStack } from "../helpers/pulumi-stack";
import { checkServerless } from "../languages/serverless-checks";

/**
 * Serverless inference as code in TypeScript: examples/serverless's program (a template running the example's model
 * server, an endpoint that scales to zero, a worker group) deployed by the real engine against an emulator whose
 * workers really serve, then judged by ../languages/serverless-checks.ts. The program is copied into the
 * repository's ignored `.gpu-rental/`, so that `gpu-rental/provider` resolves to this package.
 */
const EXAMPLE = path.join(REPO_ROOT, "examples", "serverless");

function writeProject(): string {
  const parent = path.join(REPO_ROOT, ".gpu-rental");
  fs.mkdirSync(parent, { recursive: true });
  const dir = fs.mkdtempSync(path.join(parent, "e2e-serverless-"));
  for (const file of ["index.ts", "model_server.py"]) fs.copyFileSync(path.join(EXAMPLE, file), path.join(dir, file));
  // `main`, as the example's package.json says it (the copy has none: the repository's own would be found).
  fs.writeFileSync(path.join(dir, "Pulumi.yaml"), fs.readFileSync(path.join(EXAMPLE, "Pulumi.yaml"), "utf8") + "main: index.ts\n");
  fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "ES2022", module: "node16", moduleResolution: "node16", strict: true, skipLibCheck: true, types: ["node"] } }));
  return dir;
}

describe("serverless inference as code in TypeScript (examples/serverless) through the real engine", () => {
  let emu: TestEmulator;
  let stack: TestStack;
  let projectDir: string;

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 100, loadingMs: 200 }, ssh: true });
    projectDir = writeProject();
    stack = new TestStack(`serverless-${process.pid}`, {}, projectDir);
    await stack.init({ "gpu-rental:apiUrl": emu.url, endpointName: "ts-echo" }, { "gpu-rental:apiKey": emu.apiKey });
  }, 120_000);

  afterAll(async () => {
    await stack.dispose();
    await emu.close();
    fs.rmSync(projectDir, { recursive: true, force: true });
  }, 120_000);

  it("routes 50 requests to workers that check the signature, grows to the cap under a burst, scales to zero and back, rolls a new template, and destroy leaves nothing", async () => {
    expect(await stack.ok("up", "--yes")).toMatch(/\+ 4 created/);
    await checkServerless({
      url: emu.url,
      apiKey: emu.apiKey,
      endpointName: "ts-echo",
      maxWorkers: 2,
      inactivityTimeout: 300,
      redeploy: async (modelVersion) => {
        await stack.ok("config", "set", "modelVersion", modelVersion);
        await stack.ok("up", "--yes");
      },
    });
    await stack.ok("destroy", "--yes");
    const client = emu.client();
    expect(await client.endpoints.list()).toEqual([]);
    expect(await client.workerGroups.list()).toEqual([]);
    expect(await client.instances.list()).toEqual([]);
  }, 300_000);
});
