import { Clock } from "../../emulator";
import type { InstanceRecord } from "../../emulator/domain/records";
import { emulator, TestEmulator } from "../helpers/emulator";
import { TestStack } from "../helpers/pulumi-stack";
import { UserProgram } from "../helpers/user-program";

/** The tsconfig.json of `pulumi new typescript`: classic module resolution, which needs the package's typesVersions. */
export const PULUMI_TEMPLATE_TSCONFIG = JSON.stringify(
  {
    compilerOptions: {
      strict: true, outDir: "bin", target: "es2020", module: "commonjs", moduleResolution: "node", sourceMap: true,
      experimentalDecorators: true, pretty: true, noFallthroughCasesInSwitch: true, noImplicitReturns: true,
      forceConsistentCasingInFileNames: true,
    },
    files: ["index.ts"],
  },
  null,
  2,
);

/**
 * What a user does with the packed package in a program of their own, outside the repository: install it, write
 * a Template and an Instance, and run the real engine through up, a second up, an in-place update, refresh and
 * destroy, with the key as a secret in stack config. `env` goes to the engine (e.g. TYPE_CHECK). `rented`, asked
 * before the first up, answers a check of the instance it makes and of the stack's outputs.
 */
export function ownProgramScenario(
  name: string, files: Record<string, string>, install: Install, env: Record<string, string> = {},
  rented?: (emu: TestEmulator) => Promise<(instance: InstanceRecord, outputs: Record<string, any>) => void | Promise<void>>,
): void {
  let emu: TestEmulator;
  let program: UserProgram;
  let stack: TestStack;
  const instances = () => emu.marketplace.instances.all();

  beforeAll(async () => {
    emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 } });
    program = await UserProgram.create(name, files, install.packages, install.dev);
    stack = new TestStack(`own-${process.pid}`, env, program.dir);
    await stack.init({ "gpu-rental:apiUrl": emu.url, label: "first" }, { "gpu-rental:apiKey": emu.apiKey });
  }, 300_000);

  afterAll(async () => {
    await stack?.dispose();
    await emu?.close();
    program?.remove();
  }, 120_000);

  let instanceId: number;

  it("holds exactly one copy of @pulumi/pulumi: the program's own", () => {
    expect(program.pulumiCopies()).toEqual([`${program.dir}/node_modules/@pulumi/pulumi`]);
  });

  it("up creates the template and an instance from it", async () => {
    const check = await rented?.(emu);
    const out = await stack.ok("up", "--yes");
    expect(out).toMatch(/\+ 3 created/);
    expect(instances()).toHaveLength(1);
    instanceId = instances()[0].id;
    expect(instances()[0]).toMatchObject({ label: "first" });
    const outputs = await stack.outputs();
    expect(outputs.instanceId).toBe(instanceId);
    await check?.(instances()[0], outputs);
  });

  it("a second up changes nothing", async () => {
    expect(await stack.ok("up", "--yes", "--expect-no-changes")).toMatch(/3 unchanged/);
  });

  it("a label change is an update in place", async () => {
    await stack.ok("config", "set", "label", "second");
    const out = await stack.ok("up", "--yes");
    expect(out).toMatch(/~ 1 updated/);
    expect(instances().map((i) => [i.id, i.label])).toEqual([[instanceId, "second"]]);
  });

  it("refresh reads everything back, and finds nothing to change", async () => {
    await stack.ok("refresh", "--yes");
    expect(await stack.ok("up", "--yes", "--expect-no-changes")).toMatch(/3 unchanged/);
  });

  it("destroy leaves nothing in the emulator", async () => {
    expect(await stack.ok("destroy", "--yes")).toMatch(/- 3 deleted/);
    expect(instances()).toHaveLength(0);
    expect(emu.marketplace.templates.search(emu.marketplace.seededUser.id, { creator_id: { eq: emu.marketplace.seededUser.id } })).toEqual([]);
  });

  it("never writes or prints the API key in plaintext", () => {
    const everything = stack.stateText() + stack.transcript.join("\n");
    expect(everything.length).toBeGreaterThan(1000);
    expect(everything).not.toContain(emu.apiKey);
  });
}

/** What a program installs: its dependencies and devDependencies (`name@range`; `gpu-rental` is the packed package). */
export interface Install {
  packages: string[];
  dev?: string[];
}

/** A TypeScript program's packages, declared as the TypeScript examples (and `pulumi new typescript`) declare them. */
export const TYPESCRIPT_PROGRAM: Install = { packages: ["gpu-rental", "@pulumi/pulumi@3.248.0"], dev: ["typescript@~5.9.3", "@types/node@^20.19.43"] };

export const PROJECT = (name: string, typescript: boolean) => `name: ${name}
runtime:
  name: nodejs
  options:
    typescript: ${typescript}
`;

/** A TypeScript program of a user's, `index.ts` as given, with @pulumi/pulumi 3.248.0 and the packed package. */
export function typescriptProgram(name: string, index: string): Promise<UserProgram> {
  const files = { "Pulumi.yaml": PROJECT(name, true), "index.ts": index, "tsconfig.json": PULUMI_TEMPLATE_TSCONFIG };
  return UserProgram.create(name, files, TYPESCRIPT_PROGRAM.packages, TYPESCRIPT_PROGRAM.dev);
}

/**
 * A TypeScript program of a user's (see typescriptProgram) on a stack of its own against a fresh emulator, made
 * before the tests of the enclosing describe and removed after them. The fields are set once beforeAll has run.
 */
export function deployedProgram(
  name: string,
  index: string,
  emulatorOptions: Parameters<typeof emulator>[0] = {},
  config: Record<string, string> = {},
  env: Record<string, string> = {},
): { emu: TestEmulator; program: UserProgram; stack: TestStack } {
  const ctx = {} as { emu: TestEmulator; program: UserProgram; stack: TestStack };
  beforeAll(async () => {
    ctx.emu = await emulator({ clock: new Clock("running"), lifecycle: { provisioningMs: 50, loadingMs: 100 }, ...emulatorOptions });
    ctx.program = await typescriptProgram(name, index);
    ctx.stack = new TestStack(`${name}-${process.pid}`, env, ctx.program.dir);
    await ctx.stack.init({ "gpu-rental:apiUrl": ctx.emu.url, ...config }, { "gpu-rental:apiKey": ctx.emu.apiKey });
  }, 300_000);
  afterAll(async () => {
    await ctx.stack?.dispose();
    await ctx.emu?.close();
    ctx.program?.remove();
  }, 180_000);
  return ctx;
}
