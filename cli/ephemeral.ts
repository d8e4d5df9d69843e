import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parallelismFor } from "./parallelism";
import { pulumi, PulumiWorkspace } from "./pulumi";
import { FRESH_STACK, StackOutputs, StackState, stackStateOf } from "./stack-state";
import { projectRuntime } from "./project-file";
import { ensureToolchain, runtimeLanguage } from "./toolchain";

export interface EphemeralStackOptions {
  /** The Pulumi project (the folder holding Pulumi.yaml). */
  programDir: string;
  stackName: string;
  /** Plain stack config. */
  config?: Record<string, string>;
  /** Secret stack config: handed to `pulumi config set --secret` on stdin, so never on a command line, and stored encrypted. */
  secrets?: Record<string, string>;
  /** Environment of the engine, the program and the provider host. */
  env?: Record<string, string>;
  /** Gets the progress of `up` and `destroy` as Pulumi prints it; default: none. */
  onOutput?: (text: string) => void;
  /** Pulumi's `--color` for `up` and `destroy`; default never. */
  color?: "never" | "auto" | "always";
  /** A shared state backend to keep the stack in (`pulumi login`'s URL); the stack is removed from it afterwards. */
  backend?: string;
}

/** The engine event that a step is about to run, as `--event-log` writes it (the fields read here). */
export interface EngineEvent {
  resourcePreEvent?: {
    metadata: { op: string; urn: string; diffs?: string[]; old?: { inputs?: Record<string, unknown> }; new?: { inputs?: Record<string, unknown> } };
  };
}

export interface UpOptions {
  /** `--parallel`; default one slot per resource of the stack (cli/parallelism.ts). */
  parallel?: number;
  /** `--expect-no-changes`: the up fails when it changed anything. */
  expectNoChanges?: boolean;
  /** Gets the engine's events after the up, whatever its outcome (from its `--event-log`). */
  onEvent?: (event: EngineEvent) => void;
}

/**
 * Runs `use` with a new stack of the program on a private local backend (its own Pulumi home and file backend in a
 * temporary folder, its secrets under a random passphrase this process holds: PulumiWorkspace), driven by runs of
 * the Pulumi CLI, then removes its config file and the folder, whatever happened. Nothing of it outlives the call.
 */
export async function withEphemeralStack<T>(options: EphemeralStackOptions, use: (stack: EphemeralStack) => Promise<T>): Promise<T> {
  const programDir = path.resolve(options.programDir);
  if (!fs.existsSync(path.join(programDir, "Pulumi.yaml"))) throw new Error(`${programDir} holds no Pulumi.yaml: give the folder of a Pulumi project.`);
  const configFile = path.join(programDir, `Pulumi.${options.stackName}.yaml`);
  if (fs.existsSync(configFile)) throw new Error(`${configFile} exists already: choose another stack name (--stack), this one would overwrite it.`);

  // The hosts the program's runtime needs (a YAML program's is built only then), or why there is none here.
  const toolchain = ensureToolchain({ languages: [runtimeLanguage(projectRuntime(programDir).name)] });
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-stack-"));
  const ws: PulumiWorkspace = { toolchain, projectDir: programDir, stateDir, env: options.env, backend: options.backend };
  let initialised = false;
  try {
    await pulumi(ws, ["stack", "init", options.stackName]);
    initialised = true;
    await configure(ws, options);
    return await use(new EphemeralStack(ws, options));
  } finally {
    // A private backend lives in the folder, and goes with it; a shared one is told to forget the stack.
    if (initialised && options.backend) await pulumi(ws, ["stack", "rm", "--yes", "--force", "--stack", options.stackName]);
    fs.rmSync(configFile, { force: true });
    fs.rmSync(ws.stateDir, { recursive: true, force: true });
  }
}

/** Plain config in one `config set-all`; each secret on stdin, so that it never shows in a process's argv. */
async function configure(ws: PulumiWorkspace, options: EphemeralStackOptions): Promise<void> {
  const plain = Object.entries(options.config ?? {}).flatMap(([key, value]) => ["--plaintext", `${key}=${value}`]);
  if (plain.length) await pulumi(ws, ["config", "set-all", "--stack", options.stackName, ...plain]);
  for (const [key, value] of Object.entries(options.secrets ?? {})) {
    await pulumi(ws, ["config", "set", "--secret", key, "--stack", options.stackName], { input: value });
  }
}

/** The stack of withEphemeralStack: `up`, `destroy` and what its state holds. */
export class EphemeralStack {
  /** The state, read once after the first up (a second up of a stable program changes neither outputs nor count). */
  private state?: Promise<StackState>;
  /** The same with its secrets decrypted, read only when asked for one. */
  private revealed?: Promise<StackState>;
  private updated = false;
  private runs = 0;

  constructor(
    readonly workspace: PulumiWorkspace,
    private readonly options: EphemeralStackOptions,
  ) {}

  get name(): string {
    return this.options.stackName;
  }

  async up(options: UpOptions = {}): Promise<void> {
    const flags = ["--parallel", String(await this.parallelism(options.parallel))];
    if (options.expectNoChanges) flags.unshift("--expect-no-changes");
    const eventLog = options.onEvent && path.join(this.workspace.stateDir, `events-${++this.runs}.jsonl`);
    if (eventLog) flags.push("--event-log", eventLog);
    this.updated = true;
    try {
      // The flag is one of the CLI's debug commands and flags (as the Automation API runs it, too).
      await this.run("up", flags, eventLog ? { PULUMI_DEBUG_COMMANDS: "true" } : undefined);
    } finally {
      if (eventLog) readEvents(eventLog).forEach((event) => options.onEvent!(event));
    }
  }

  async destroy(options: { parallel?: number } = {}): Promise<void> {
    await this.run("destroy", ["--parallel", String(await this.parallelism(options.parallel))]);
  }

  /**
   * The stack's outputs after its first up: values decoded, secrets marked, and the secret ones among `reveal`
   * decrypted (the others sealed: decrypting costs the CLI a key derivation, and most callers
   * show a secret as `[secret]` anyway).
   */
  async outputs(reveal: string[] = []): Promise<StackOutputs> {
    const { outputs } = await this.read();
    if (!reveal.some((name) => outputs[name]?.sealed)) return outputs;
    this.revealed ??= pulumi(this.workspace, ["stack", "export", "--show-secrets", "--stack", this.name]).then(stackStateOf);
    return (await this.revealed).outputs;
  }

  /** As the Automation API ran them: no preview, no prompt, the progress streamed to the caller. */
  private async run(command: "up" | "destroy", flags: string[], env?: Record<string, string>): Promise<void> {
    const args = [command, "--yes", "--skip-preview", ...flags, "--color", this.options.color ?? "never", "--stack", this.name];
    await pulumi(this.workspace, args, { onOutput: this.options.onOutput, env });
  }

  /** A state that cannot be read counts as a fresh one, as before: the operation then reports what is wrong. */
  private async parallelism(requested?: number): Promise<number> {
    if (requested) return requested;
    return parallelismFor((await this.read().catch(() => FRESH_STACK)).resourceCount);
  }

  /** A stack never updated holds nothing: no CLI run to learn that. */
  private read(): Promise<StackState> {
    if (!this.updated) return Promise.resolve(FRESH_STACK);
    this.state ??= pulumi(this.workspace, ["stack", "export", "--stack", this.name]).then(stackStateOf);
    return this.state;
  }
}

/** The events of an `--event-log` file, one JSON object a line (a line cut short by a crash is skipped). */
function readEvents(file: string): EngineEvent[] {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, "utf8").split("\n").flatMap((line) => {
    try {
      return line.trim() ? [JSON.parse(line) as EngineEvent] : [];
    } catch {
      return [];
    }
  });
}
