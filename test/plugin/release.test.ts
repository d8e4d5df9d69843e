import { execFile, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { PLUGIN_EXECUTABLE } from "../../provider/plugin/names";
import { pulumi } from "../../cli/pulumi";
import { makeVirtualEnv } from "../../cli/python-env";
import { ensureToolchain } from "../../cli/toolchain";
import { Clock } from "../../emulator";
import { archiveName, hostPlatform, makePluginArchives } from "../../release/archives";
import { checkedDownloadUrl } from "../../release/release";
import { PLUGIN_DOWNLOAD_URL } from "../../provider/schema/schema";
import { PACKAGE_ROOT } from "../../sdk/package-root";
import { emulator, TestEmulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";
import { ReleaseMirror, sharedRelease, VERSION } from "../helpers/release-mirror";
import { withoutNode } from "../helpers/paths";
import { pageScript, scriptOfPage } from "../languages/doc-program";

const providerGrpc = require("@pulumi/pulumi/proto/provider_grpc_pb");
const { Empty } = require("google-protobuf/google/protobuf/empty_pb");

const run = promisify(execFile);
const ARCHIVE = archiveName(VERSION, hostPlatform());

/**
 * What `npm run release` makes (made once per test run: sharedRelease), used as Pulumi users use a provider: the
 * release's GitHub downloads served by a mirror on loopback (test/helpers/release-mirror.ts), the wheel installed
 * into a virtual environment, programs run with no node, npm or npx on PATH and an empty Pulumi home with plugin
 * downloads on, so the engine fetches the plugin from the mirror. Then the ways it can go wrong, each with an error
 * that says what to do. A Python team's whole way with the wheel alone is docs/python.md's, followed by
 * test/languages/python.test.ts.
 */
describe("a release, installed with pip and the engine's own plugin download", () => {
  let mirror: ReleaseMirror;
  let released: string;
  let venv: string;
  let emu: TestEmulator;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-release-test-"));
  /** Archives of other versions the failure cases ask for, beside the release's. */
  const others = path.join(work, "others");
  const wheel = () => path.join(released, `pulumi_gpu_rental-${VERSION}-py3-none-any.whl`);

  beforeAll(async () => {
    fs.mkdirSync(others);
    released = await sharedRelease();
    mirror = await ReleaseMirror.start([released, others]);
    venv = withWheel(work, wheel());
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 20, loadingMs: 20 } });
  }, 300_000);
  afterAll(async () => {
    await emu?.close();
    await mirror?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("writes this platform's self-contained archive, the others' launchers, the wheel naming the project's releases with its gpu-rental command, and the schema the plugin serves (= schema.json)", async () => {
    const names = fs.readdirSync(released);
    expect(names).toEqual(expect.arrayContaining([ARCHIVE, archiveName(VERSION, "darwin-arm64"), archiveName(VERSION, "windows-amd64"), path.basename(wheel()), "schema.json"]));
    const { stdout: manifest } = await run("unzip", ["-p", wheel(), "pulumi_gpu_rental/pulumi-plugin.json"]);
    expect(JSON.parse(manifest)).toEqual({ resource: true, name: "gpu-rental", version: VERSION, server: PLUGIN_DOWNLOAD_URL });
    // Only pulumi from PyPI (typing-extensions only before Python 3.11): the SDK reads its version with packaging,
    // which pulumi brings, not parver.
    const { stdout: metadata } = await run("unzip", ["-p", wheel(), `pulumi_gpu_rental-${VERSION}.dist-info/METADATA`]);
    const requires = metadata.split("\n").filter((line) => line.startsWith("Requires-Dist:")).map((line) => line.split(/[ <>=~;]+/)[1]);
    expect(requires.sort()).toEqual(["pulumi", "typing-extensions"]);
    expect(metadata).toMatch(/^Requires-Dist: typing-extensions.*; python_version < "3\.11"$/m);
    const { stdout: scripts } = await run("unzip", ["-p", wheel(), `pulumi_gpu_rental-${VERSION}.dist-info/entry_points.txt`]);
    expect(scripts).toMatch(/^\[console_scripts\]\ngpu-rental = pulumi_gpu_rental\._command:main$/m);

    const schema = JSON.parse(fs.readFileSync(path.join(released, "schema.json"), "utf8"));
    expect(schema).toMatchObject({ version: VERSION, pluginDownloadURL: PLUGIN_DOWNLOAD_URL });
    const committed = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, "schema.json"), "utf8"));
    const aside = ({ version, ...rest }: Record<string, unknown>) => rest;
    expect(aside(schema)).toEqual(aside(committed));
    expect(committed).toMatchObject({ displayName: expect.any(String), publisher: expect.any(String), homepage: expect.any(String), repository: expect.any(String), license: "Apache-2.0" });

    // The Go SDK, from the toolchain's Go language host: a module folder naming the same download URL.
    const goDir = path.join(released, "go");
    expect(fs.readFileSync(path.join(goDir, "go.mod"), "utf8")).toMatch(/^module github\.com\/gpu-rental\/gpu-rental\/sdk\/go$/m);
    expect(JSON.parse(fs.readFileSync(path.join(goDir, "gpurental", "pulumi-plugin.json"), "utf8"))).toMatchObject({ name: "gpu-rental", version: VERSION, server: PLUGIN_DOWNLOAD_URL });
  });

  it("puts gpu-rental on PATH, which fetches the release's executable itself where there is no pulumi (through the mirror the engine would use), and serves the command from it, toolchain included", async () => {
    const cache = path.join(work, "command-cache");
    const env = { ...process.env, ...mirror.env, PATH: `${path.join(venv, "bin")}${path.delimiter}${withoutNode(work)}`, GPU_RENTAL_CACHE: cache, PULUMI_HOME: path.join(work, "command-home") };
    const { stdout, stderr } = await run(path.join(venv, "bin", "gpu-rental"), ["--version"], { env });
    expect(stdout.trim()).toBe(VERSION);
    expect(stderr).toContain(`fetching gpu-rental v${VERSION}'s executable once, from ${mirror.env.PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES.split("=")[1]}${ARCHIVE} (there is no pulumi on PATH to fetch it)`);
    expect(fs.statSync(path.join(cache, `release-v${VERSION}-${hostPlatform()}`, PLUGIN_EXECUTABLE)).size).toBeGreaterThan(50e6);
    // Again: the one fetched, not fetched again.
    const again = await run(path.join(venv, "bin", "gpu-rental"), ["sweep"], { env }).catch((error) => error);
    expect(again.stderr).toContain("sweep needs --token-prefix, --token, --label or --stack");
    expect(again.stderr).not.toContain("fetching");
    expect(mirror.fetched(ARCHIVE)).toBe(1);
    // toolchain, from the package files the executable unpacked: a pulumi with the hosts on PATH is taken as it is.
    const { GPU_RENTAL_BUILD_PULUMI: _forced, ...userEnv } = env as NodeJS.ProcessEnv;
    const toolchain = await run(path.join(venv, "bin", "gpu-rental"), ["toolchain"], { env: { ...userEnv, PATH: `${ensureToolchain().bin}${path.delimiter}${env.PATH}` } });
    expect(toolchain.stdout.trim()).toBe(ensureToolchain().bin);
    expect(toolchain.stderr).toMatch(/\[toolchain\] using v3\.248\.0 from PATH/);
    expect(fs.readdirSync(cache)).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^package-v${VERSION.replace(/\./g, "\\.")}-[0-9a-f]{12}$`))]));
  });

  it("installs ahead of time as docs/installation-configuration.md prints it: the self-contained executable, in the Pulumi plugins", async () => {
    const script = scriptOfPage(pageScript("docs/installation-configuration.md", ["Installation"]));
    expect(script.split("\n").filter((line) => line && !line.startsWith("#"))).toEqual([`pulumi plugin install resource gpu-rental v${VERSION} --server ${PLUGIN_DOWNLOAD_URL}`]);
    const home = path.join(work, "ahead-home");
    const env = { ...process.env, ...mirror.env, PULUMI_HOME: home, PULUMI_SKIP_UPDATE_CHECK: "true", PATH: `${ensureToolchain().bin}${path.delimiter}${withoutNode(work)}` };
    await run("bash", ["-e", "-c", script], { env });
    const executable = path.join(home, "plugins", `resource-gpu-rental-v${VERSION}`, PLUGIN_EXECUTABLE);
    expect(fs.statSync(executable).size).toBeGreaterThan(50e6);
    expect((await run(executable, ["gpu-rental", "--version"], { env })).stdout.trim()).toBe(VERSION);
  });

  it("says what to do when the download URL serves no archive of the version, when this platform has only the launcher and no Node.js, and when the plugin's version is not the SDK's", async () => {
    // Three programs side by side, each in its own empty Pulumi home, each failing before anything is made. Each
    // asks for another version, as an SDK of that version does (here pinned by the resource option `version`),
    // and the release server holds for it: nothing (0.0.7); only the launcher for this platform, as a release
    // made on another platform publishes it (0.0.8); this release's plugin, published under the wrong version (0.0.9).
    await makePluginArchives(others, "0.0.8", { selfContained: false, launchers: [hostPlatform()] });
    fs.linkSync(path.join(released, ARCHIVE), path.join(others, archiveName("0.0.9", hostPlatform())));
    const [missing, platform, version] = await Promise.all([
      failingRun(work, venv, emu, mirror, "missing", { version: "0.0.7" }),
      failingRun(work, venv, emu, mirror, "platform", { version: "0.0.8" }),
      failingRun(work, venv, emu, mirror, "version", { version: "0.0.9" }),
    ]);

    const served = mirror.env.PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES.split("=")[1];
    expect(missing).toContain(`404 HTTP error fetching plugin from ${served}${archiveName("0.0.7", hostPlatform())}`);
    expect(missing).toContain(`install the plugin using \`pulumi plugin install resource gpu-rental v0.0.7 --server ${PLUGIN_DOWNLOAD_URL}\``);

    expect(platform).toContain(`gpu-rental v0.0.8: this release has no self-contained plugin for ${hostPlatform()}; its plugin runs on Node.js 20 or later, and there is no node on PATH. Install Node.js 20+`);
    expect(platform).toContain("npm install gpu-rental@0.0.8 @pulumi/pulumi@3.248.0, then npx gpu-rental plugin install");

    expect(version).toContain(`The gpu-rental plugin running is v${VERSION}, but the program's gpu-rental SDK asks for v0.0.9`);
    expect(version).toMatch(/pulumi plugin install resource gpu-rental v0\.0\.9 --reinstall/);
    expect(version).toContain(`pip install pulumi_gpu_rental==${VERSION}`);
  }, 180_000);

  it("starts with nothing on stderr: no Node.js warning of the executable's require() (ssh2 probes for native addons it can do without)", async () => {
    const dir = path.join(work, "unpacked");
    fs.mkdirSync(dir);
    await run("tar", ["-xzf", path.join(released, ARCHIVE), "-C", dir]);
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
 * home with the engine's plugin downloads on (from the mirror), the Pulumi CLI and no node, npm or npx on PATH.
 * `options` become the resources' ResourceOptions (the failure cases pin a version).
 */
async function pythonStack(name: string, work: string, venv: string, emu: TestEmulator, mirror: ReleaseMirror, options: Record<string, string>): Promise<TestStack> {
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
  const path_ = [ensureToolchain().bin, path.join(venv, "bin"), withoutNode(work)].join(path.delimiter);
  const stack = new TestStack(name, { ...mirror.env, PATH: path_, PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "false", GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: emu.apiKey }, dir);
  await pulumi(stack.ws, ["stack", "init", name]);
  return stack;
}

/** An `up` that must fail before its instance is made; its output, on one line. */
async function failingRun(work: string, venv: string, emu: TestEmulator, mirror: ReleaseMirror, name: string, options: Record<string, string>): Promise<string> {
  const stack = await pythonStack(name, work, venv, emu, mirror, options);
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
 * A virtual environment with the release's wheel, as pip installs it: pulumi==3.248.0 from the suite's cached
 * environment (cli/python-env.ts, as `gpu-rental test` makes a program's), then the wheel alone (`--no-deps`: its one
 * requirement is that pulumi). docs/python.md's test installs both from the network, as the page says.
 */
function withWheel(work: string, wheel: string): string {
  const dir = path.join(work, "wheel");
  fs.mkdirSync(dir);
  const venv = makeVirtualEnv(dir, { name: "python", options: { virtualenv: "venv" } })!;
  const pip = spawnSync(path.join(venv, "bin", "python"), ["-m", "pip", "install", "--quiet", "--no-deps", wheel], { encoding: "utf8" });
  if (pip.status !== 0) throw new Error(`pip install ${wheel} failed: ${pip.stderr}`);
  return venv;
}
