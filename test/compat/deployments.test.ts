import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { Clock } from "../../emulator";
import { bundleFolder, remoteClientCriteria, remoteClientEnv, VENDOR_CONSOLE_URL } from "../../sdk";
import { emulator, http, TestEmulator } from "../helpers/emulator";
import { REPO_ROOT } from "../helpers/paths";
import { TestStack } from "../helpers/pulumi-stack";
import { findPython, findPythonAtLeast, venv } from "../helpers/python";
import { VastaiCli, VASTAI_REQUIREMENTS } from "../helpers/vastai";

const run = promisify(execFile);

/**
 * Deployments judged by the vendor's own client: a program written only with `vastai.serverless.remote` (1.9.1 from
 * PyPI, unchanged; pointed at the emulator by its own settings) deploys a function, calls it, deploys changed code
 * and a broken one; the public CLI lists the versions, stops, starts and deletes the deployment. The emulator's
 * workers are emulated machines running the vendor's worker program on the pushed bundle, so every answer below
 * was computed by a worker. A Deployment a Pulumi program declares from the program's file is the one that client
 * then finds by name: it calls it without making a version.
 */
const client = findPythonAtLeast(12);
const cliPython = findPython();
const missing = "missing" in client ? client.missing : "missing" in cliPython ? cliPython.missing : undefined;
if (missing) console.warn(`test/compat/deployments.test.ts (skipped: ${missing})`);

/** The user's program: `deploy` makes the deployment ready; `call` also calls the function once. */
function program(body: string, broken = false, name = "square"): string {
  return `import asyncio, json, os, sys
from vastai import AsyncClient
from vastai.serverless.remote import Deployment

URL = os.environ.get("EMULATOR_URL", "")
# The client reads the service's root certificate before its first call: the emulator serves one.
AsyncClient.SSL_CERT_URL = URL + "/static/jvastai_root.cer"
${broken ? 'if os.environ.get("IS_DEPLOYMENT"):\n    raise RuntimeError("this version is broken")\n' : ""}
app = Deployment(name="${name}", api_key=os.environ.get("EMULATOR_KEY", "on-a-worker"), webserver_url=URL, autoscaler_url=URL)
app.image("vastai/base-image:latest", 16)
app.configure_autoscaling(min_load=1, cold_workers=0, max_workers=1)

@app.remote(benchmark_dataset=[{"x": 2}])
async def square(x):
    ${body}

if __name__ == "__main__":
    app.ensure_ready()
    out = {"id": app._inner.deployment.id, "action": app._inner.deployment.action}
    if sys.argv[1] == "call":
        out["answer"] = asyncio.run(square(7))
    print(json.dumps(out))
`;
}

(missing ? describe.skip : describe)(`deployments through the vendor's vastai.serverless.remote (${VASTAI_REQUIREMENTS.join(", ")})${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let emu: TestEmulator;
  let cli: VastaiCli;
  let python: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-deployment-"));
  const api = async (method: string, url: string) => (await http(emu.url, method, url, { key: emu.apiKey })).body;

  /** Runs the program in `file`: what it printed last (JSON). */
  const runProgram = async (file: string, mode: "deploy" | "call") => {
    const { stdout } = await run(python, [file, mode], { cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: dir, EMULATOR_URL: emu.url, EMULATOR_KEY: emu.apiKey }, timeout: 180_000 });
    return JSON.parse(stdout.trim().split("\n").pop()!) as { id: number; action: string; answer?: number };
  };
  /** Runs the program with this code. */
  const push = async (mode: "deploy" | "call", body: string, broken = false) => {
    const file = path.join(dir, "app.py");
    fs.writeFileSync(file, program(body, broken));
    return runProgram(file, mode);
  };
  const deployment = async (id: number) => (await api("GET", `/api/v0/deployment/${id}/`)).deployment;
  const until = async <T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 120_000): Promise<T> => {
    for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 250))) {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    }
    throw new Error(`timed out waiting until ${what}`);
  };
  const workerStates = (endpointId: number) => emu.marketplace.serverless.workersOf({ endpointId }).filter((w) => !w.retiring).map((w) => emu.marketplace.autoscaler.stateOf(w));

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 100, loadingMs: 200 }, ssh: true });
    const env = await venv("vastai-deploy", client as { command: string; version: string }, VASTAI_REQUIREMENTS);
    python = env.bin("python");
    cli = await VastaiCli.install(cliPython as { command: string; version: string }, emu.url, emu.apiKey);
  }, 15 * 60_000);
  afterAll(async () => {
    cli?.close();
    await emu?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("the SDK's bundle has the content hash the client computes, for a module and for a package; its env flags and criteria are the client's", async () => {
    const pkg = path.join(dir, "pkg");
    fs.mkdirSync(path.join(pkg, "sub", "deeper"), { recursive: true });
    fs.writeFileSync(path.join(pkg, "__init__.py"), 'from .sub import helper  #!VAST_IGNORE_CHANGES\nNAME = "caf\u00e9 \\"#\\" not a comment"\n"""\n#!VAST_IGNORE_CHANGES inside a string\n"""\n');
    fs.writeFileSync(path.join(pkg, "sub", "__init__.py"), "def helper():\n    return 1\n");
    fs.writeFileSync(path.join(pkg, "sub", "deeper", "data.txt"), "#!VAST_IGNORE_CHANGES kept: not a .py file\n");
    fs.writeFileSync(path.join(pkg, "a.py"), "x = 1 # !VAST_IGNORE_CHANGES\n");
    const module = path.join(dir, "module.py");
    fs.writeFileSync(module, program("return x * x"));
    // With it, what else the client puts: its env flags and criteria for a program left on the service's defaults.
    const script = "import sys\nfrom vastai.data import Query\nfrom vastai.serverless.remote.base import Config\nfrom vastai.serverless.remote.deploy import Deployment\n" +
      "from vastai.serverless.remote.utils import compute_deployment_hash\n" +
      "for p in sys.argv[1:]:\n    print(compute_deployment_hash(Config('caf\u00e9', [], [], [], []), p))\n" +
      "print(compute_deployment_hash(Config('caf\u00e9', [], [], [('A', '1'), ('B', 'x \"y\"')], []), sys.argv[1]))\n" +
      "d = Deployment(name='x', api_key='k')\nimage = d.image('i', 50).require(Query({'gpu_name': {'eq': 'RTX 4090'}, 'num_gpus': {'gte': 2}}))\n" +
      "print(d._compile_env(image))\nprint(image._requires.unparse_query())\n";
    const { stdout } = await run(python, ["-c", script, module, pkg]);
    expect(stdout.trim().split("\n")).toEqual([
      bundleFolder(module, { name: "caf\u00e9" }).hash, bundleFolder(pkg, { name: "caf\u00e9" }).hash,
      bundleFolder(module, { name: "caf\u00e9", envs: [["A", "1"], ["B", 'x "y"']] }).hash,
      remoteClientEnv({ apiUrl: VENDOR_CONSOLE_URL }), remoteClientCriteria("gpu_name=RTX_4090 num_gpus>=2"),
    ]);
  });

  it("deploys and calls, redeploys changed code as a second version, never serves a broken one, stops, starts, and delete leaves nothing", async () => {
    const first = await push("call", "return x * x");
    expect(first).toMatchObject({ action: "created", answer: 49 });
    const { id } = first;
    const made = await deployment(id);
    expect(made).toMatchObject({ name: "square", tag: "default", current_version_id: made.last_healthy_version_id, worker_count: 1 });

    // Changed code: a second version; the workers roll onto it, and it answers the new way.
    expect(await push("deploy", "return x * x + 1")).toMatchObject({ id, action: "soft_update" });
    const second = await until("the second version serves", async () => {
      const d = await deployment(id);
      return d.current_version_id !== made.current_version_id && d.last_healthy_version_id === d.current_version_id && d;
    });
    expect(await push("call", "return x * x + 1")).toMatchObject({ action: "exists", answer: 50 });
    const versions = await cli.raw(["show", "deployment-versions", String(id)]);
    expect(versions.map((v: any) => [v.id, v.status])).toEqual([[made.current_version_id, "healthy"], [second.current_version_id, "healthy"]]);

    // A version whose code fails on the worker never serves: the last healthy one answers.
    expect(await push("deploy", "return x * x + 2", true)).toMatchObject({ action: "soft_update" });
    const broken = await until("the broken version failed", async () => {
      const rows = (await api("GET", `/api/v0/deployment/${id}/versions/`)).versions;
      return rows.find((v: any) => v.status === "failed");
    });
    expect(broken.error).toMatch(/this version is broken/);
    expect(await deployment(id)).toMatchObject({ current_version_id: broken.id, last_healthy_version_id: second.current_version_id });
    expect(await push("call", "return x * x + 2", true)).toMatchObject({ action: "exists", answer: 50 });

    // Stop: its workers end (inactive, nothing computing); start: they come back and serve.
    expect(await cli.ok(["stop", "deployment", String(id)])).toMatch(/stopped/);
    await until("every worker is inactive", () => workerStates(made.endpoint_id).every((s) => s === "inactive"));
    expect((await deployment(id)).endpoint_state).toBe("stopped");
    await cli.ok(["start", "deployment", String(id)]);
    await until("a worker serves again", () => workerStates(made.endpoint_id).includes("ready"));
    expect(await push("call", "return x * x + 2", true)).toMatchObject({ answer: 50 });

    // Delete: no deployment, endpoint, group, worker or instance is left.
    await cli.ok(["delete", "deployment", String(id)]);
    expect((await api("GET", "/api/v0/deployments")).deployments).toEqual([]);
    const sdk = emu.client();
    expect(await sdk.endpoints.list()).toEqual([]);
    expect(await sdk.workerGroups.list()).toEqual([]);
    expect(await sdk.instances.list()).toEqual([]);
  }, 10 * 60_000);

  it("a Deployment a Pulumi program declares from the client's file is the one the client calls by name, with no new version", async () => {
    // The program's folder holds the client's own file; the Deployment declares it with the client's settings.
    fs.mkdirSync(path.join(REPO_ROOT, ".gpu-rental"), { recursive: true });
    const project = fs.mkdtempSync(path.join(REPO_ROOT, ".gpu-rental", "compat-byname-"));
    fs.mkdirSync(path.join(project, "code"));
    fs.writeFileSync(path.join(project, "code", "app.py"), program("return x * x", false, "byname"));
    fs.writeFileSync(path.join(project, "Pulumi.yaml"), "name: byname\nruntime:\n  name: nodejs\n  options:\n    typescript: true\nmain: index.ts\n");
    fs.writeFileSync(path.join(project, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "ES2022", module: "node16", moduleResolution: "node16", strict: true, skipLibCheck: true, types: ["node"] } }));
    fs.writeFileSync(path.join(project, "index.ts"), `import * as path from "node:path";
import { Deployment } from "gpu-rental/provider";
export const deploymentId = new Deployment("byname", { name: "byname", codeFolder: path.join(__dirname, "code", "app.py"), image: "vastai/base-image:latest",
  storage: 16, minLoad: 1, coldWorkers: 0, maxWorkers: 1 }).deploymentId;
`);
    const stack = new TestStack(`compat-byname-${process.pid}`, {}, project);
    try {
      await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey });
      await stack.ok("up", "--yes");
      const { deploymentId } = await stack.outputs();
      const versions = async () => (await api("GET", `/api/v0/deployment/${deploymentId}/versions/`)).versions.map((v: any) => v.id);
      const before = await versions();

      expect(await runProgram(path.join(project, "code", "app.py"), "call")).toEqual({ id: deploymentId, action: "exists", answer: 49 });
      expect(await versions()).toEqual(before);
      expect(before).toHaveLength(1);
    } finally {
      await stack.remove();
      fs.rmSync(project, { recursive: true, force: true });
    }
  }, 5 * 60_000);
});
