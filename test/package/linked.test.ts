import * as fs from "node:fs";
import * as path from "node:path";
import { Clock } from "../../emulator";
import { emulator, TestEmulator } from "../helpers/emulator";
import { REPO_ROOT } from "../helpers/paths";
import { TestStack, TYPE_CHECK } from "../helpers/pulumi-stack";
import { tarball, UserProgram } from "../helpers/user-program";
import { PROJECT, PULUMI_TEMPLATE_TSCONFIG, TYPESCRIPT_PROGRAM } from "./own-program";

const PROGRAM = `import { Instance } from "gpu-rental/provider";

const worker = new Instance("worker", { gpuModel: "RTX 3090", image: "nvidia/cuda:12.4.1-runtime-ubuntu22.04", label: "linked" });
export const instanceId = worker.instanceId;
`;

/**
 * Deploys, redeploys without changes and destroys the program in `dir` against the emulator, type-checked by the
 * engine: the package's types must resolve through the link and from the workspace root too.
 */
async function roundTrip(emu: TestEmulator, dir: string): Promise<void> {
  const stack = new TestStack(`linked-${process.pid}`, TYPE_CHECK, dir);
  try {
    await stack.init({ "gpu-rental:apiUrl": emu.url }, { "gpu-rental:apiKey": emu.apiKey });
    expect(await stack.ok("up", "--yes")).toMatch(/\+ 2 created/);
    expect(emu.marketplace.instances.all().map((i) => i.label)).toEqual(["linked"]);
    expect(await stack.ok("up", "--yes", "--expect-no-changes")).toMatch(/2 unchanged/);
    expect(await stack.ok("destroy", "--yes")).toMatch(/- 2 deleted/);
    expect(emu.marketplace.instances.all()).toHaveLength(0);
  } finally {
    await stack.remove();
  }
}

let emu: TestEmulator;
beforeAll(async () => {
  emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 } });
});
afterAll(() => emu.close());

const files = { "Pulumi.yaml": PROJECT("linked", true), "index.ts": PROGRAM, "tsconfig.json": PULUMI_TEMPLATE_TSCONFIG };

it("works when the package is linked into a program from a checkout (npm link)", async () => {
  const program = await UserProgram.create("npm-link", files, ["@pulumi/pulumi@3.248.0"], TYPESCRIPT_PROGRAM.dev);
  try {
    // npm link also links the checkout globally: into a prefix of the test's own, not the machine's. Without
    // its scripts: the checkout's `prepare` would rebuild dist/ (emptying it first) under the tests that run
    // beside this one; `pretest` built it already, as a developer's checkout is built.
    const globalPrefix = path.join(program.dir, "global");
    fs.mkdirSync(path.join(globalPrefix, "lib", "node_modules"), { recursive: true });
    await program.npmWith({ npm_config_prefix: globalPrefix }, "link", "--ignore-scripts", REPO_ROOT);
    expect(fs.existsSync(path.join(program.dir, "global", "lib", "node_modules", "gpu-rental"))).toBe(true);
    expect(fs.lstatSync(path.join(program.dir, "node_modules", "gpu-rental")).isSymbolicLink()).toBe(true);
    await roundTrip(emu, program.dir);
  } finally {
    program.remove();
  }
}, 300_000);

it("works from a package of an npm workspace, with the package hoisted to the workspace root", async () => {
  const root = await UserProgram.create("workspace", {
    "package.json": JSON.stringify({ name: "monorepo", private: true, workspaces: ["infra"] }),
    ...Object.fromEntries(Object.entries(files).map(([file, text]) => [`infra/${file}`, text])),
    "infra/package.json": JSON.stringify({
      name: "infra",
      version: "1.0.0",
      private: true,
      dependencies: { "gpu-rental": `file:${tarball()}`, "@pulumi/pulumi": "3.248.0" },
      devDependencies: { typescript: "~5.9.3", "@types/node": "^20" },
    }),
  }, []);
  try {
    expect(fs.existsSync(path.join(root.dir, "node_modules", "gpu-rental", "package.json"))).toBe(true);
    expect(fs.existsSync(path.join(root.dir, "infra", "node_modules", "gpu-rental"))).toBe(false);
    expect(root.pulumiCopies()).toEqual([path.join(root.dir, "node_modules", "@pulumi", "pulumi")]);
    await roundTrip(emu, path.join(root.dir, "infra"));
  } finally {
    root.remove();
  }
}, 300_000);
