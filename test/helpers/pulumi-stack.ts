import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pulumi, runPulumi, PulumiResult, PulumiWorkspace } from "../../cli/pulumi";
import { stackStateOf } from "../../cli/stack-state";
import { ensureToolchain } from "../../cli/toolchain";
import { PACKAGE_ROOT } from "../../sdk/package-root";

/**
 * The engine runs TypeScript programs without type-checking them (ts-node's transpile-only, which @pulumi/pulumi
 * reads from PULUMI_NODEJS_TRANSPILE_ONLY): the examples are type-checked by test/package/examples-types.test.ts, and a test about the
 * types a user's program sees (own-program-ts, linked) asks for the check with `TYPE_CHECK` in its env.
 */
export const TRANSPILE_ONLY = { PULUMI_NODEJS_TRANSPILE_ONLY: "true" };
export const TYPE_CHECK = { PULUMI_NODEJS_TRANSPILE_ONLY: "false" };

const SKIPS_PREVIEW = ["up", "refresh", "destroy"];

/**
 * A stack of the root Pulumi project (Pulumi.yaml at the repository root), or of the project in `projectDir`,
 * run by the real `pulumi` CLI in a private home and file backend, configured against an emulator.
 */
export class TestStack {
  readonly ws: PulumiWorkspace;
  /** Everything the CLI printed, for the secret checks. */
  readonly transcript: string[] = [];

  constructor(
    readonly name: string,
    env: Record<string, string> = {},
    projectDir: string = PACKAGE_ROOT,
  ) {
    this.ws = {
      toolchain: ensureToolchain(),
      projectDir,
      stateDir: fs.mkdtempSync(path.join(os.tmpdir(), `gpu-rental-${name}-`)),
      env: { ...TRANSPILE_ONLY, ...env },
    };
  }

  /**
   * Runs the CLI on this stack. `up`, `refresh` and `destroy` run as CI runs them (pulumi/actions, through the
   * Automation API): without the preview that `--yes` alone runs first, which would run the program twice. A
   * test about that preview passes `--skip-preview=false`.
   */
  async run(...args: string[]): Promise<PulumiResult> {
    const skip = SKIPS_PREVIEW.includes(args[0]) && !args.some((arg) => arg.startsWith("--skip-preview"));
    const result = await runPulumi(this.ws, [...args, ...(skip ? ["--skip-preview"] : []), "--stack", this.name]);
    this.transcript.push(result.stdout, result.stderr);
    return result;
  }

  /** Runs and requires success; returns stdout. */
  async ok(...args: string[]): Promise<string> {
    const result = await this.run(...args);
    if (result.code !== 0) throw new Error(`pulumi ${args.join(" ")} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
    return result.stdout;
  }

  async init(config: Record<string, string>, secrets: Record<string, string>): Promise<void> {
    // Its secrets under the workspace's passphrase (random, as a `gpu-rental test`'s stack's), or the one its env gives.
    await pulumi(this.ws, ["stack", "init", this.name]);
    // One CLI run for all plain settings; each secret on stdin (never on a command line).
    const plain = Object.entries(config).flatMap(([key, value]) => ["--plaintext", `${key}=${value}`]);
    if (plain.length) await this.ok("config", "set-all", ...plain);
    for (const [key, value] of Object.entries(secrets)) {
      const result = await runPulumi(this.ws, ["config", "set", "--secret", key, "--stack", this.name], { input: value });
      if (result.code !== 0) throw new Error(result.stderr);
    }
  }

  /**
   * The outputs as `pulumi stack output --json` shows them (a secret as "[secret]"), read from `stack export`,
   * which decrypts nothing: `stack output` derives the stack's key first (CPU on every call).
   */
  async outputs(): Promise<Record<string, any>> {
    const { outputs } = stackStateOf(await this.ok("stack", "export"));
    return Object.fromEntries(Object.entries(outputs).map(([name, output]) => [name, output.secret ? "[secret]" : output.value]));
  }

  /** Every file the backend and the stack config hold, as text. */
  stateText(): string {
    const files = [...walk(this.ws.stateDir), path.join(this.ws.projectDir, `Pulumi.${this.name}.yaml`)];
    return files.filter((f) => fs.existsSync(f) && fs.statSync(f).isFile()).map((f) => fs.readFileSync(f, "utf8")).join("\n");
  }

  /** Destroys whatever the stack still holds, then removes it: for `finally` blocks and `afterAll`. */
  async dispose(): Promise<void> {
    await this.run("destroy", "--yes");
    await this.remove();
  }

  /** The stack lives in its private backend folder: removing that and its config file removes it (no CLI run). */
  async remove(): Promise<void> {
    fs.rmSync(path.join(this.ws.projectDir, `Pulumi.${this.name}.yaml`), { force: true });
    fs.rmSync(this.ws.stateDir, { recursive: true, force: true });
  }
}

function* walk(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else yield full;
  }
}
