import { execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { PLUGIN_EXECUTABLE } from "../../cli/plugin-install";
import { pulumi } from "../../cli/pulumi";
import { ensureToolchain } from "../../cli/toolchain";
import { PACKAGE_ROOT } from "../../sdk/package-root";
import { Clock, holdingsOf } from "../../emulator";
import { archiveName, hostPlatform, makePluginArchives } from "../../provider/release/archives";
import { checkedDownloadUrl, Release, release } from "../../provider/release/release";
import { emulator, TestEmulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";
import { sharedOnce } from "../helpers/user-program";

const providerGrpc = require("@pulumi/pulumi/proto/provider_grpc_pb");
const { Empty } = require("google-protobuf/google/protobuf/empty_pb");

const run = promisify(execFile);
const VERSION: string = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")).version;
const ARCHIVE = archiveName(VERSION, hostPlatform());

/**
 * What `npm run release` makes, used as Pulumi users use a provider: a loopback HTTP server serves the release
 * folder; a Python program whose only set-up is `pip install` of the release's wheel and `pulumi==3.248.0` runs
 * with no node, npm or npx on PATH and an empty Pulumi home with plugin downloads on, so the engine fetches the
 * plugin from the server the wheel names. Then the ways it can go wrong, each with an error that says what to do.
 * The plugin archives are built once per test run (sharedOnce); the wheel and schema by the release itself.
 */
describe("a release, installed with pip and the engine's own plugin download", () => {
  let server: FolderServer;
  let made: Release;
  let venv: string;
  let emu: TestEmulator;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-release-test-"));
  const out = path.join(work, "release");

  beforeAll(async () => {
    fs.mkdirSync(out);
    server = await serveFolder(out);
    const archives = await sharedOnce(`plugin archives v${VERSION}`, async (dir) => {
      await makePluginArchives(dir, VERSION);
    });
    made = await release({ out, downloadUrl: `${server.url}/`, archivesFrom: archives, log: () => {} });
    venv = await pipInstalled(path.join(work, "venv"), made.wheel);
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 20, loadingMs: 20 } });
  }, 300_000);
  afterAll(async () => {
    await emu?.close();
    await server?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("writes this platform's self-contained archive, the others' launchers, the wheel naming the server, and the schema the plugin serves (= schema.json)", async () => {
    expect(made.archives.map((file) => path.basename(file))).toEqual(expect.arrayContaining([ARCHIVE, archiveName(VERSION, "darwin-arm64"), archiveName(VERSION, "windows-amd64")]));
    expect(path.basename(made.wheel)).toBe(`pulumi_gpu_rental-${VERSION}-py3-none-any.whl`);
    const { stdout: manifest } = await run("unzip", ["-p", made.wheel, "pulumi_gpu_rental/pulumi-plugin.json"]);
    expect(JSON.parse(manifest)).toEqual({ resource: true, name: "gpu-rental", version: VERSION, server: `${server.url}/` });
    // Only pulumi from PyPI (typing-extensions only before Python 3.11): the SDK reads its version with packaging,
    // which pulumi brings, not parver.
    const { stdout: metadata } = await run("unzip", ["-p", made.wheel, `pulumi_gpu_rental-${VERSION}.dist-info/METADATA`]);
    const requires = metadata.split("\n").filter((line) => line.startsWith("Requires-Dist:")).map((line) => line.split(/[ <>=~;]+/)[1]);
    expect(requires.sort()).toEqual(["pulumi", "typing-extensions"]);
    expect(metadata).toMatch(/^Requires-Dist: typing-extensions.*; python_version < "3\.11"$/m);

    const released = JSON.parse(fs.readFileSync(made.schema, "utf8"));
    expect(released).toMatchObject({ version: VERSION, pluginDownloadURL: `${server.url}/` });
    const committed = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, "schema.json"), "utf8"));
    const aside = ({ version, pluginDownloadURL, ...rest }: Record<string, unknown>) => rest;
    expect(aside(released)).toEqual(aside(committed));
    expect(committed).toMatchObject({ displayName: expect.any(String), publisher: expect.any(String), homepage: expect.any(String), repository: expect.any(String), license: "Apache-2.0", pluginDownloadURL: expect.stringMatching(/^github:\/\//) });

    // The Go SDK, from the toolchain's Go language host: a module folder naming the same download URL.
    expect(made.go).toEqual({ dir: path.join(out, "go") });
    const goDir = (made.go as { dir: string }).dir;
    expect(fs.readFileSync(path.join(goDir, "go.mod"), "utf8")).toMatch(/^module github\.com\/gpu-rental\/gpu-rental\/sdk\/go$/m);
    expect(JSON.parse(fs.readFileSync(path.join(goDir, "gpurental", "pulumi-plugin.json"), "utf8"))).toMatchObject({ name: "gpu-rental", version: VERSION, server: `${server.url}/` });
  });

  it("runs up, a no-op up and destroy with the plugin the engine downloaded once, no Node.js anywhere on PATH", async () => {
    const stack = await pythonStack("pip", work, venv, emu, {});
    try {
      expect(await shell(stack, "command -v node npm npx || echo none")).toBe("none");
      const up = await stack.ok("up", "--yes");
      expect(up).toMatch(/\+ 3 created/);
      const installed = path.join(stack.ws.stateDir, "home", "plugins", `resource-gpu-rental-v${VERSION}`, PLUGIN_EXECUTABLE);
      expect(fs.statSync(installed).size).toBeGreaterThan(50e6); // the self-contained executable, not a launcher
      const [instance] = holdingsOf(emu.marketplace, emu.marketplace.seededUser.id).instances;
      expect(emu.marketplace.instances.all().find((i) => i.id === instance)?.label).toBe("from-pip-pip");
      expect(await stack.ok("up", "--yes", "--expect-no-changes")).toMatch(/3 unchanged/);
      expect(await stack.ok("destroy", "--yes")).toMatch(/- 3 deleted/);
      expect(holdingsOf(emu.marketplace, emu.marketplace.seededUser.id)).toEqual({ instances: [], volumes: [], templates: [], apiKeys: [expect.any(Number)], sshKeys: [], envVars: [], webhooks: [], endpoints: [], workerGroups: [] });
      expect(server.fetched(`/${ARCHIVE}`)).toBe(1);
    } finally {
      await stack.remove();
    }
  }, 300_000);

  it("says what to do when the download URL serves no archive of the version, when this platform has only the launcher and no Node.js, and when the plugin's version is not the SDK's", async () => {
    // Three programs side by side, each in its own empty Pulumi home, each failing before anything is made. Each
    // asks for another version, as an SDK of that version does (here pinned by the resource option `version`),
    // and the release server holds for it: nothing (0.0.7); only the launcher for this platform, as a release
    // made on another platform publishes it (0.0.8); this release's plugin, published under the wrong version (0.0.9).
    await makePluginArchives(out, "0.0.8", { selfContained: false, launchers: [hostPlatform()] });
    fs.linkSync(path.join(out, ARCHIVE), path.join(out, archiveName("0.0.9", hostPlatform())));
    const [missing, platform, version] = await Promise.all([
      failingRun(work, venv, emu, "missing", { version: "0.0.7" }),
      failingRun(work, venv, emu, "platform", { version: "0.0.8" }),
      failingRun(work, venv, emu, "version", { version: "0.0.9" }),
    ]);

    expect(missing).toContain(`404 HTTP error fetching plugin from ${server.url}/${archiveName("0.0.7", hostPlatform())}`);
    expect(missing).toContain(`install the plugin using \`pulumi plugin install resource gpu-rental v0.0.7 --server ${server.url}\``);

    expect(platform).toContain(`gpu-rental v0.0.8: this release has no self-contained plugin for ${hostPlatform()}; its plugin runs on Node.js 20 or later, and there is no node on PATH. Install Node.js 20+`);
    expect(platform).toContain("npm install gpu-rental@0.0.8 @pulumi/pulumi@3.248.0, then npx gpu-rental plugin install");

    expect(version).toContain(`The gpu-rental plugin running is v${VERSION}, but the program's gpu-rental SDK asks for v0.0.9`);
    expect(version).toMatch(/pulumi plugin install resource gpu-rental v0\.0\.9 --reinstall/);
    expect(version).toContain(`pip install pulumi_gpu_rental==${VERSION}`);
  }, 180_000);

  it("starts with nothing on stderr: no Node.js warning of the executable's require() (ssh2 probes for native addons it can do without)", async () => {
    const dir = path.join(work, "unpacked");
    fs.mkdirSync(dir);
    await run("tar", ["-xzf", path.join(out, ARCHIVE), "-C", dir]);
    const child = spawn(path.join(dir, PLUGIN_EXECUTABLE), ["127.0.0.1:1"], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      // Its port, then its answer to the engine's first call: everything loaded, as when the engine starts it.
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().split("\n")[0])));
        child.once("exit", (code) => reject(new Error(`the plugin exited ${code} before printing its port: ${stderr}`)));
      });
      const client = new providerGrpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      const info: any = await new Promise((resolve, reject) => client.getPluginInfo(new Empty(), (error: Error | null, answer: unknown) => (error ? reject(error) : resolve(answer))));
      client.close();
      expect(info.getVersion()).toBe(VERSION);
    } finally {
      child.kill();
      await exited;
    }
    expect(stderr).toBe("");
  });

  it("refuses a download URL the engine cannot use, naming the forms it takes", () => {
    expect(() => checkedDownloadUrl("127.0.0.1:8080/releases")).toThrow(/is not a URL: give an http\(s\):\/\/ URL of the folder/);
    expect(() => checkedDownloadUrl("ftp://example.com/releases/")).toThrow(/not a place the engine downloads plugins from: give .*github:\/\/api\.github\.com\/<owner>\/<repository>/);
    expect(checkedDownloadUrl("https://example.com/gpu-rental/")).toBe("https://example.com/gpu-rental/");
  });
});

/**
 * A Python program in a folder of its own, using the release's virtual environment, as a stack in an empty Pulumi
 * home with the engine's plugin downloads on and a PATH without node, npm or npx. `options` become the
 * resources' ResourceOptions (the failure cases pin a download URL or a version).
 */
async function pythonStack(name: string, work: string, venv: string, emu: TestEmulator, options: Record<string, string>): Promise<TestStack> {
  const dir = path.join(work, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, "Pulumi.yaml"), `name: release-${name}\nruntime:\n  name: python\n  options:\n    virtualenv: ${venv}\n`);
  const opts = `pulumi.ResourceOptions(${Object.entries(options).map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(", ")})`;
  fs.writeFileSync(
    path.join(dir, "__main__.py"),
    `import pulumi
import pulumi_gpu_rental as gpu_rental

opts = ${opts}
template = gpu_rental.Template("worker", name="pip-${name}", image="pytorch/pytorch", tag="2.4.0-cuda12.4-cudnn9-runtime", runtype="ssh", opts=opts)
trainer = gpu_rental.Instance("trainer", template_hash_id=template.hash_id, gpu_model="RTX 4090", label="from-pip-${name}", opts=opts)
pulumi.export("instance_id", trainer.instance_id)
`,
  );
  const stack = new TestStack(name, { PATH: withoutNode(work, venv), PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "false", GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: emu.apiKey }, dir);
  await pulumi(stack.ws, ["stack", "init", name]);
  return stack;
}

/** An `up` that must fail before its instance is made; its output, on one line. */
async function failingRun(work: string, venv: string, emu: TestEmulator, name: string, options: Record<string, string>): Promise<string> {
  const stack = await pythonStack(name, work, venv, emu, options);
  try {
    const result = await stack.run("up", "--yes");
    const output = `${result.stdout}\n${result.stderr}`.replace(/\s+/g, " ");
    if (result.code === 0) throw new Error(`the ${name} case's up succeeded:\n${output}`);
    expect(emu.marketplace.instances.all().filter((i) => i.label === `from-pip-${name}`)).toEqual([]);
    return output;
  } finally {
    await stack.remove();
  }
}

/**
 * A virtual environment as a user makes one, its only set-up `pip install` of the wheel and pulumi==3.248.0 (the
 * wheel's other dependencies come from PyPI, pip's cache warm).
 */
async function pipInstalled(venv: string, wheel: string): Promise<string> {
  await run("python3", ["-m", "venv", venv]);
  await run(path.join(venv, "bin", "pip"), ["install", "--quiet", "--disable-pip-version-check", wheel, "pulumi==3.248.0"], { maxBuffer: 16 << 20 });
  return venv;
}

/** Runs a shell command with the stack's environment (its PATH). */
async function shell(stack: TestStack, command: string): Promise<string> {
  const { stdout } = await run("/bin/sh", ["-c", command], { env: { ...process.env, ...stack.ws.env } });
  return stdout.trim();
}

/**
 * A PATH as on a machine without Node.js: the toolchain's `pulumi` and its hosts, the virtual environment, and
 * links to the system's commands but node, npm, npx and corepack. Made once per test folder.
 */
function withoutNode(work: string, venv: string): string {
  const bin = path.join(work, "system-bin");
  if (!fs.existsSync(bin)) {
    fs.mkdirSync(`${bin}.partial`);
    for (const dir of ["/usr/local/bin", "/usr/bin", "/bin"]) {
      for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
        if (["node", "nodejs", "npm", "npx", "corepack"].includes(name) || fs.existsSync(path.join(`${bin}.partial`, name))) continue;
        fs.symlinkSync(path.join(dir, name), path.join(`${bin}.partial`, name));
      }
    }
    fs.renameSync(`${bin}.partial`, bin);
  }
  return [ensureToolchain().bin, path.join(venv, "bin"), bin].join(path.delimiter);
}

interface FolderServer {
  url: string;
  /** How many GETs of `urlPath` were answered with the file. */
  fetched(urlPath: string): number;
  close(): Promise<void>;
}

/** Serves a folder's files over loopback HTTP (404 for anything else), counting what it served. */
async function serveFolder(root: string): Promise<FolderServer> {
  const served = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const urlPath = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const file = path.join(root, path.normalize(urlPath));
    if (req.method !== "GET" || !file.startsWith(root) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end("not found");
      return;
    }
    served.set(urlPath, (served.get(urlPath) ?? 0) + 1);
    res.writeHead(200, { "content-type": "application/gzip", "content-length": fs.statSync(file).size });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    fetched: (urlPath) => served.get(urlPath) ?? 0,
    close: () => new Promise((resolve) => server.close(() => resolve()).closeAllConnections()),
  };
}
