import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { ensureToolchain } from "../../cli/toolchain";
import { REPO_ROOT, removeTree, withoutNode } from "../helpers/paths";
import { TRANSPILE_ONLY } from "../helpers/pulumi-stack";
import { ReleaseMirror, sharedRelease, VERSION } from "../helpers/release-mirror";
import { UserProgram } from "../helpers/user-program";

const run = promisify(execFile);
const EXAMPLES = fs.readdirSync(path.join(REPO_ROOT, "examples")).filter((name) => fs.existsSync(path.join(REPO_ROOT, "examples", name, "Pulumi.yaml")));

/**
 * Examples whose program needs a provider plugin besides gpu-rental's, which no registry here serves (the engine
 * downloads it on a user's machine): deployed only where the machine has it, else a reported skip.
 */
const PLUGIN_PACKAGES: Record<string, string> = { "post-boot": "command" };

/**
 * The folder holding `pulumi-resource-<name>` on this machine: on PATH (the engine runs such a plugin from there),
 * or installed in the user's Pulumi home (`pulumi plugin install`); undefined when it has none.
 */
function pluginOnMachine(name: string): string | undefined {
  const file = `pulumi-resource-${name}`;
  const onPath = (process.env.PATH ?? "").split(path.delimiter).find((dir) => dir && fs.existsSync(path.join(dir, file)));
  if (onPath) return onPath;
  const plugins = path.join(process.env.PULUMI_HOME ?? path.join(os.homedir(), ".pulumi"), "plugins");
  const installed = fs.existsSync(plugins) ? fs.readdirSync(plugins).filter((dir) => dir.startsWith(`resource-${name}-v`)) : [];
  return installed.map((dir) => path.join(plugins, dir)).find((dir) => fs.existsSync(path.join(dir, file)));
}

/** The `npx gpu-rental test ...` line of an example's README: the test runs what the README tells a user to run. */
function testCommandOf(example: string): string {
  const readme = fs.readFileSync(path.join(REPO_ROOT, "examples", example, "README.md"), "utf8");
  const line = readme.split("\n").find((l) => l.startsWith("npx gpu-rental test"));
  if (!line) throw new Error(`examples/${example}/README.md shows no \`npx gpu-rental test\` command`);
  return line;
}

/**
 * The examples a user runs with the release alone, no Node.js (examples/python: its requirements name the release's
 * wheel, which brings the `gpu-rental` command): their README's block is run as it is, on a PATH without node, npm
 * or npx, with the Pulumi CLI installed, behind the mirror of the release's downloads (test/helpers/release-mirror.ts).
 */
const WITHOUT_NODE = ["python"];

/** The shell block of an example's README that tries it against the emulator. */
function tryBlockOf(example: string): string {
  const readme = fs.readFileSync(path.join(REPO_ROOT, "examples", example, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Try it against the emulator"));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block?.includes("gpu-rental test")) throw new Error(`examples/${example}/README.md shows no block with \`gpu-rental test\` to try it`);
  return block;
}

/**
 * examples/ci's README line is its workflow's emulator job (plus a JUnit report), which test/package/ci.test.ts
 * runs exactly as written in a copy of the example: deployed there, not twice.
 */
const RUN_BY_CI_TEST = "ci";

it("examples/ci's README line is the command its workflow runs (deployed by ci.test.ts)", () => {
  const workflow = fs.readFileSync(path.join(REPO_ROOT, "examples", "ci", ".github", "workflows", "gpu-infrastructure.yml"), "utf8");
  const run = /run: (npx gpu-rental test .*)/.exec(workflow)?.[1];
  expect(run?.replace(/ --junit \S+/, "")).toBe(testCommandOf(RUN_BY_CI_TEST));
});

it("covers every kind of program the project promises", () => {
  expect(EXAMPLES.sort()).toEqual(["ci", "ci-api-key", "deployment", "go", "instance-from-image", "interruptible", "network-volume", "post-boot", "python", "serverless", "team-account", "template-fleet", "two-accounts", "yaml"]);
});

/**
 * Each example, copied out of the repository and installed from the packed tarball, deployed, checked and
 * destroyed through the real engine by the command its README shows (`gpu-rental test` with its checks). The
 * examples are independent (each its own folder, stack and emulator) and run side by side, as many at once as
 * jest's maxConcurrency allows: much of an engine run is waiting (polls, process starts), not computing.
 */
describe.each(EXAMPLES.filter((example) => example !== RUN_BY_CI_TEST && !WITHOUT_NODE.includes(example)))("examples/%s", (example) => {
  const plugin = PLUGIN_PACKAGES[example] ? pluginOnMachine(PLUGIN_PACKAGES[example]) : "";
  const unavailable = plugin === undefined;
  // Skipped and said so, not passed: its wiring is checked under Pulumi's mocks (post-boot.test.ts), its steps
  // through the workflow library and OpenSSH (test/ssh/).
  if (unavailable) {
    console.warn(
      `examples/${example} is not deployed: this machine has no pulumi-resource-${PLUGIN_PACKAGES[example]} (on PATH or in the Pulumi home), ` +
        "and no registry here serves it (the engine downloads it on a user's machine).",
    );
  }
  (unavailable ? it.skip : it.concurrent)("installs from the packed package and passes its README's `gpu-rental test`", async () => {
    const program = await UserProgram.fromExample(example);
    try {
      // Not type-checked again by the engine: examples-types.test.ts type-checks every example.
      // A plugin found on the machine reaches the engine on PATH (the run's Pulumi home is its own).
      const env = { ...process.env, ...TRANSPILE_ONLY, PATH: [ensureToolchain().bin, plugin, process.env.PATH].filter(Boolean).join(path.delimiter) };
      await passesTest(example, testCommandOf(example), program.dir, env);
      expect(fs.readdirSync(program.dir).filter((f) => /^Pulumi\..+\.yaml$/.test(f))).toEqual([]);
    } finally {
      program.remove();
    }
  }, 600_000); // two at a time: each shares the machine with the other
});

describe.each(WITHOUT_NODE)("examples/%s, with the release alone", (example) => {
  it.concurrent("passes its README's `gpu-rental test` on a machine with no Node.js", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gpu-rental-example-${example}-`));
    const mirror = await ReleaseMirror.start([await sharedRelease()]);
    try {
      fs.cpSync(path.join(REPO_ROOT, "examples", example), dir, { recursive: true });
      const env = { ...process.env, ...TRANSPILE_ONLY, ...mirror.env, PULUMI_HOME: path.join(dir, ".pulumi-home"), PATH: [ensureToolchain().bin, withoutNode(dir)].join(path.delimiter) };
      await passesTest(example, tryBlockOf(example), dir, env);
      expect(mirror.fetched(`pulumi_gpu_rental-${VERSION}-py3-none-any.whl`)).toBeGreaterThanOrEqual(1);
    } finally {
      await mirror.close();
      removeTree(dir);
    }
  }, 600_000);
});

/** Runs an example's README commands in its folder; every step of their `gpu-rental test` must pass. */
async function passesTest(example: string, script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  const { stdout } = await run("bash", ["-e", "-c", script], { cwd, env, maxBuffer: 64 * 1024 * 1024 }).catch((error) => {
    throw new Error(`gpu-rental test failed for examples/${example}:\n${error.stdout}\n${error.stderr}`);
  });
  const [, passed, total] = /gpu-rental test: (\d+) of (\d+) steps passed/.exec(stdout) ?? [];
  expect(Number(total)).toBeGreaterThanOrEqual(6);
  expect(passed).toBe(total);
  expect(stdout).toMatch(/PASS second up shows no changes/);
  expect(stdout).toMatch(/PASS nothing left in the emulator/);
}
