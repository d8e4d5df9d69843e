import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { ensureToolchain } from "../../cli/toolchain";
import { REPO_ROOT } from "../helpers/provider-host";
import { TRANSPILE_ONLY } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";

const run = promisify(execFile);
const EXAMPLES = fs.readdirSync(path.join(REPO_ROOT, "examples")).filter((name) => fs.existsSync(path.join(REPO_ROOT, "examples", name, "Pulumi.yaml")));

/** Examples whose program needs a provider plugin besides gpu-rental's (from the toolchain where downloads fail). */
const PLUGIN_PACKAGES: Record<string, string> = { "post-boot": "command" };

/** The `npx gpu-rental test ...` line of an example's README: the test runs what the README tells a user to run. */
function testCommandOf(example: string): string {
  const readme = fs.readFileSync(path.join(REPO_ROOT, "examples", example, "README.md"), "utf8");
  const line = readme.split("\n").find((l) => l.startsWith("npx gpu-rental test"));
  if (!line) throw new Error(`examples/${example}/README.md shows no \`npx gpu-rental test\` command`);
  return line;
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
  expect(EXAMPLES.sort()).toEqual(["ci", "ci-api-key", "instance-from-image", "interruptible", "network-volume", "post-boot", "python", "template-fleet", "two-accounts", "yaml"]);
});

/**
 * Each example, copied out of the repository and installed from the packed tarball, deployed, checked and
 * destroyed through the real engine by the command its README shows (`gpu-rental test` with its checks). The
 * examples are independent (each its own folder, stack and emulator) and run side by side, as many at once as
 * jest's maxConcurrency allows: much of an engine run is waiting (polls, process starts), not computing.
 */
describe.each(EXAMPLES.filter((example) => example !== RUN_BY_CI_TEST))("examples/%s", (example) => {
  const unavailable = PLUGIN_PACKAGES[example] && !ensureToolchain().plugins.some((plugin) => plugin.name === PLUGIN_PACKAGES[example]);
  // Skipped and said so, not passed: the same steps are proven through the workflow library and OpenSSH (test/ssh/).
  if (unavailable) console.warn(`examples/${example} is not deployed: the ${PLUGIN_PACKAGES[example]} provider plugin could not be obtained on this machine.`);
  (unavailable ? it.skip : it.concurrent)("installs from the packed package and passes its README's `gpu-rental test`", async () => {
    const program = await UserProgram.fromExample(example);
    try {
      // Not type-checked again by the engine: examples-types.test.ts type-checks every example.
      const env = { ...process.env, ...TRANSPILE_ONLY, PATH: `${ensureToolchain().bin}${path.delimiter}${process.env.PATH}` };
      const { stdout } = await run("bash", ["-c", testCommandOf(example)], { cwd: program.dir, env, maxBuffer: 64 * 1024 * 1024 }).catch((error) => {
        throw new Error(`gpu-rental test failed for examples/${example}:\n${error.stdout}\n${error.stderr}`);
      });
      const [, passed, total] = /gpu-rental test: (\d+) of (\d+) steps passed/.exec(stdout) ?? [];
      expect(Number(total)).toBeGreaterThanOrEqual(6);
      expect(passed).toBe(total);
      expect(stdout).toMatch(/PASS second up shows no changes/);
      expect(stdout).toMatch(/PASS nothing left in the emulator/);
      expect(fs.readdirSync(program.dir).filter((f) => /^Pulumi\..+\.yaml$/.test(f))).toEqual([]);
    } finally {
      program.remove();
    }
  }, 600_000); // two at a time: each shares the machine with the other
});
