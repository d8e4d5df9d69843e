import { ChildProcess, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { ensureToolchain } from "../../cli/toolchain";
import { exec } from "../../sdk";
import { blocksOf, checkOf, TERMINAL } from "../docs/page-blocks";
import { LocalRegistry } from "../helpers/local-registry";
import { removeTree, withoutNode, withoutPulumi } from "../helpers/paths";
import { tarball } from "../helpers/user-program";

/**
 * A page's commands in order: its `sh` blocks, its `title="file"` blocks written to those files (as script), and
 * the blocks a terminal of its own runs (a long-running command such as the emulator, started where it appears).
 */
export interface PageScript {
  steps: ({ script: string } | { terminal: string })[];
}

/**
 * The sections of a page of the repository (`README.md`, `docs/python.md`) as they are printed, nothing replaced;
 * the blocks the page marks as not run here (test/docs/page-blocks.ts) left out.
 */
export function pageScript(file: string, sections: string[]): PageScript {
  const blocks = blocksOf(file);
  for (const title of sections) if (!blocks.some((b) => b.section === title)) throw new Error(`${file} has no section "${title}" with a block`);
  const steps: PageScript["steps"] = [];
  const add = (script: string) => {
    const last = steps[steps.length - 1];
    if (last && "script" in last) last.script += `\n${script}`;
    else steps.push({ script });
  };
  for (const block of blocks.filter((b) => sections.includes(b.section))) {
    const first = block.body.split("\n")[0];
    if (block.title) add(`cat > ${block.title} <<'DOCS_FILE_END'\n${block.body}DOCS_FILE_END`);
    else if (block.lang !== "sh" || checkOf(block).kind === "not-run") continue;
    else if (TERMINAL.test(first)) steps.push({ terminal: block.body.split("\n").slice(1).join("\n").trim() });
    else add(block.body);
  }
  return { steps };
}

/** The page's commands but those of its terminals, as one script. */
export function scriptOfPage(page: PageScript): string {
  return page.steps.flatMap((step) => ("script" in step ? [step.script] : [])).join("\n");
}

/** The commands its terminals run. */
export function terminalsOf(page: PageScript): string[] {
  return page.steps.flatMap((step) => ("terminal" in step ? [step.terminal] : []));
}

/** The sections of a docs page as one shell script (for pages whose tests run it against their own emulator). */
export function scriptOf(page: string, sections: string[]): string {
  return scriptOfPage(pageScript(path.join("docs", page), sections));
}

/**
 * Logs in with a private key where a program's `ssh -p <port> root@<host>` output says (the host key checked when
 * `emu` is a test's own emulator) and answers `logged in to <instance id>`; an SshError when the key is refused.
 */
export async function loginWith(emu: { ssh?: { hostPublicKey: string } }, sshCommand: string, privateKey: string): Promise<string> {
  const [, port, host] = /-p (\d+) root@(\S+)/.exec(sshCommand) ?? [];
  if (!port) throw new Error(`not an ssh command: ${sshCommand}`);
  const result = await exec({ host, port: Number(port) }, 'echo "logged in to $CONTAINER_ID"', { privateKey, hostKey: emu.ssh?.hostPublicKey, timeoutMs: 30_000 });
  return result.stdout.trim();
}

export interface Run {
  code: number;
  output: string;
}

/** The passphrase the docs export for the stacks' secrets: the tests' own commands use the same. */
const DOCS_PASSPHRASE = "choose-a-passphrase";

/**
 * A user's machine for one docs page: a home folder of its own outside the repository (Pulumi home, a local file
 * backend, npm's real cache), and the packed package served as `gpu-rental` by a local registry. A page's own
 * commands run as printed in a shell whose PATH has no `pulumi` (the page puts one there, as it tells users to);
 * the tests' own commands around them have the toolchain's on PATH. Every command's output is kept, for the checks
 * that secrets never show.
 */
export class DocMachine {
  readonly transcript: string[] = [];
  private readonly terminals: Terminal[] = [];

  private constructor(
    readonly home: string,
    /** The tests' own commands' environment. */
    readonly env: NodeJS.ProcessEnv,
    /** The page's commands' environment: a user's, with no pulumi on PATH and nothing of the test run's. */
    readonly printedEnv: NodeJS.ProcessEnv,
    private readonly registry: LocalRegistry,
  ) {}

  /**
   * `options`: a machine with no Node.js (no node, npm or npx on any PATH), one with the Pulumi CLI installed (the
   * toolchain's on the page's PATH too), and settings of the machine's own (its network's proxy, say).
   */
  static async start(name: string, options: { node?: boolean; pulumiInstalled?: boolean; env?: Record<string, string> } = {}): Promise<DocMachine> {
    const registry = await LocalRegistry.start(tarball());
    const home = fs.mkdtempSync(path.join(os.tmpdir(), `gpu-rental-${name}-`));
    fs.mkdirSync(path.join(home, "backend"));
    const inherited = withoutNpmRun(process.env.PATH ?? "");
    const system = options.node === false ? withoutNode(home, inherited) : withoutPulumi(inherited);
    const user: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: home,
      npm_config_cache: path.join(os.homedir(), ".npm"),
      npm_config_registry: registry.url,
      npm_config_prefer_offline: "true",
      npm_config_update_notifier: "false",
      PIP_CACHE_DIR: path.join(os.homedir(), ".cache", "pip"),
      // Go's module and build caches are the user's own, not under this machine's home folder.
      ...goCaches(),
      GPU_RENTAL_CACHE: process.env.GPU_RENTAL_CACHE ?? path.join(os.homedir(), ".cache", "gpu-rental"),
      PATH: options.pulumiInstalled ? `${ensureToolchain().bin}${path.delimiter}${system}` : system,
      PULUMI_HOME: path.join(home, ".pulumi"),
      // Where `pulumi login --local` would keep the stacks, without logging in.
      PULUMI_BACKEND_URL: `file://${path.join(home, "backend")}`,
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      // The pages' emulators without the service's rate limits (docs/emulator.md: the setting for a fast test): the
      // pages are not about them (test/package/rate-limits.test.ts is); `gpu-rental test` keeps them whatever it says.
      GPU_RENTAL_EMULATOR_RATE_LIMITS: "off",
      ...options.env,
    };
    for (const name of ["GPU_RENTAL_API_URL", "GPU_RENTAL_API_KEY", "PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE"]) delete user[name];
    const env = { ...user, PATH: `${ensureToolchain().bin}${path.delimiter}${system}`, PULUMI_CONFIG_PASSPHRASE: DOCS_PASSPHRASE };
    return new DocMachine(home, env, user, registry);
  }

  /** Runs a bash script in `cwd` (relative to the home folder), without failing on a non-zero exit. */
  run(script: string, cwd = ".", options: { record?: boolean; printed?: boolean } = {}): Promise<Run> {
    const child = spawn("bash", ["-e", "-c", script], {
      cwd: path.resolve(this.home, cwd),
      env: options.printed ? this.printedEnv : this.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
    return new Promise((resolve) => {
      // "exit", not "close": a process it left in the background would hold the pipes open. Whatever it left is
      // ended with its process group, once its output is read (or a second later).
      child.on("exit", async (code) => {
        await Promise.race([new Promise((done) => child.stdout!.once("close", done)), delay(1000)]);
        killGroup(child);
        if (options.record !== false) this.transcript.push(output);
        resolve({ code: code ?? 1, output });
      });
      // Not started at all (a folder that is not there): no exit follows.
      child.on("error", (error) => resolve({ code: 1, output: `${output}${error.message}` }));
    });
  }

  /** Runs and requires success; returns the output. */
  async ok(script: string, cwd = "."): Promise<string> {
    const { code, output } = await this.run(script, cwd);
    if (code !== 0) throw new Error(`\`${script}\` exited ${code}:\n${output}`);
    return output;
  }

  /**
   * Runs a page's commands as printed, in order, as a user in one shell does: each terminal's command is started
   * where the page has it (in the folder the shell is in then, with the variables it exported: a terminal that a
   * page says to set up "as above"), and waited for until `ready` matches its output;
   * then what the user would have done meanwhile (`meanwhile`); the script goes on where it was, its working
   * folder and exported variables (PATH after `eval "$(npx gpu-rental toolchain --env)"`) kept. All of it must succeed.
   */
  async followPage(page: PageScript, ready: RegExp[] = [], meanwhile?: () => Promise<void>): Promise<string> {
    const terminals = page.steps.filter((step) => "terminal" in step).length;
    if (terminals !== ready.length) throw new Error(`the page runs ${terminals} terminal(s): give as many ready patterns`);
    const state = path.join(this.home, ".docs-shell-state");
    // Where the shell is after each step, in a file: a process a step left behind may still print after the step.
    const at = path.join(this.home, ".docs-shell-at");
    let cwd = this.home;
    let output = "";
    for (const step of page.steps) {
      if ("terminal" in step) {
        const terminal = new Terminal(`[ ! -f ${state} ] || . ${state}\n${step.terminal}`, cwd, this.printedEnv);
        this.terminals.push(terminal);
        await terminal.waitFor(ready.shift()!);
        await meanwhile?.();
        continue;
      }
      // The shell's state from the steps before, and for the steps after (a terminal step between them).
      const script = `[ ! -f ${state} ] || . ${state}\n${step.script}\n{ export -p; printf 'cd %q\\n' "$PWD"; } > ${state}\nprintf '%s' "$PWD" > ${at}`;
      const run = await this.run(script, ".", { printed: true });
      output += run.output;
      if (run.code !== 0) throw new Error(`the page's commands exited ${run.code}:\n${output}`);
      cwd = fs.readFileSync(at, "utf8");
    }
    return output;
  }

  /** A secret stack output's value, shown only to the test (kept out of the transcript that is checked for it). */
  async secretOutput(name: string, programDir: string): Promise<string> {
    const { code, output } = await this.run(`pulumi stack output ${name} --show-secrets`, programDir, { record: false });
    if (code !== 0 || !output.trim()) throw new Error(`pulumi stack output ${name} exited ${code}: ${output}`);
    return output.trim();
  }

  /** Every file under the backend and the program's stack config files, as text. */
  stateText(programDir: string): string {
    const files = [...walk(path.join(this.home, "backend")), ...fs.readdirSync(path.resolve(this.home, programDir)).filter((f) => /^Pulumi\..+\.yaml$/.test(f)).map((f) => path.resolve(this.home, programDir, f))];
    return files.map((file) => fs.readFileSync(file, "utf8")).join("\n");
  }

  /** Stops the terminals as a user does (Ctrl-C), then removes the machine. */
  async close(): Promise<void> {
    for (const terminal of this.terminals) this.transcript.push(await terminal.stop());
    await this.registry.close();
    removeTree(this.home);
  }
}

/** A command running in a terminal of its own, in a process group of its own. */
class Terminal {
  private readonly child: ChildProcess;
  private output = "";
  private readonly exited: Promise<void>;

  constructor(command: string, cwd: string, env: NodeJS.ProcessEnv) {
    this.child = spawn("bash", ["-c", command], { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout!.on("data", (chunk) => (this.output += chunk));
    this.child.stderr!.on("data", (chunk) => (this.output += chunk));
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
  }

  async waitFor(pattern: RegExp, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let gone = false;
    void this.exited.then(() => (gone = true));
    while (!pattern.test(this.output)) {
      if (gone || Date.now() > deadline) throw new Error(`the terminal's command did not print ${pattern}${gone ? " (it exited)" : ""}:\n${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Ctrl-C (SIGINT to its process group); what it printed. */
  async stop(): Promise<string> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      killGroup(this.child, "SIGINT");
      await Promise.race([this.exited, delay(10_000)]);
      killGroup(this.child);
    }
    return this.output;
  }
}

/** A wait that keeps no process alive. */
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

function killGroup(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** Whether nothing listens on the port (a page's fixed port): a test says so rather than failing obscurely. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(false)));
    socket.once("error", () => resolve(true));
  });
}

/**
 * PATH without what `npm test` (npm's run-script) puts ahead of it: the repository's `node_modules/.bin` (where the
 * repository's own `gpu-rental` is) and npm's node-gyp folder, which a user's shell does not have: a page's
 * `gpu-rental` without `npx` then fails as it fails for its reader.
 */
function withoutNpmRun(pathValue: string): string {
  return pathValue.split(path.delimiter).filter((dir) => dir && !/node_modules[\\/]\.bin$|node-gyp-bin$/.test(dir)).join(path.delimiter);
}

/** GOPATH (the module cache under it) and GOCACHE as `go env` has them for this user; none without Go. */
function goCaches(): Record<string, string> {
  const env = spawnSync("go", ["env", "GOPATH", "GOCACHE"], { encoding: "utf8" });
  if (env.status !== 0) return {};
  const [GOPATH, GOCACHE] = env.stdout.trim().split("\n");
  return { GOPATH, GOCACHE };
}

function* walk(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else yield full;
  }
}
