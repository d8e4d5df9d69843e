import { spawn } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { backendRefusal } from "./backend";
import { Toolchain } from "./toolchain";

/** How to run the Pulumi CLI privately: own home, local file backend, no network, no plugin downloads. */
export interface PulumiWorkspace {
  toolchain: Toolchain;
  /** The project folder (holding Pulumi.yaml). */
  projectDir: string;
  /** A private folder for Pulumi's home and the file backend. */
  stateDir: string;
  /** Extra environment for the engine and the provider host (e.g. GPU_RENTAL_API_URL). */
  env?: Record<string, string>;
  /** The state backend (`pulumi login`'s URL: a team's shared one); default a private file backend in stateDir. */
  backend?: string;
  /**
   * The passphrase of the workspace's stacks, random unless set: held in this process's memory and handed to each
   * pulumi command in its environment, never written to disk nor printed. Unused when `env` gives one (a team's).
   */
  passphrase?: string;
}

export interface PulumiResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The environment of every pulumi call of a workspace; on first use it creates the workspace's folders and its
 * passphrase. The user's own passphrase settings are left out: they are for the user's stacks, not this one's.
 */
export function pulumiEnv(ws: PulumiWorkspace): Record<string, string> {
  const home = path.join(ws.stateDir, "home");
  fs.mkdirSync(path.join(ws.stateDir, "backend"), { recursive: true });
  const { PULUMI_CONFIG_PASSPHRASE: _phrase, PULUMI_CONFIG_PASSPHRASE_FILE: _file, ...user } = process.env as Record<string, string>;
  // The CLI reads PULUMI_CONFIG_PASSPHRASE before PULUMI_CONFIG_PASSPHRASE_FILE: one the caller gives wins.
  const given = ws.env?.PULUMI_CONFIG_PASSPHRASE !== undefined || ws.env?.PULUMI_CONFIG_PASSPHRASE_FILE !== undefined;
  const env: Record<string, string> = {
    ...user,
    PATH: [ws.toolchain.bin, process.env.PATH].join(path.delimiter),
    PULUMI_HOME: home,
    PULUMI_BACKEND_URL: ws.backend ?? `file://${path.join(ws.stateDir, "backend")}`,
    ...(!given && { PULUMI_CONFIG_PASSPHRASE: (ws.passphrase ??= crypto.randomBytes(24).toString("hex")) }),
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: "true",
    ...ws.env,
  };
  // A private backend needs no token (a shared one, such as Pulumi Cloud, takes the user's).
  if (!ws.backend) delete env.PULUMI_ACCESS_TOKEN;
  return env;
}

export interface PulumiRunOptions {
  /** Streams its output to this process's (so a user sees Pulumi's own progress). */
  echo?: boolean;
  /** Gets its stdout as it comes (an `up`'s progress for the caller's stream); stderr is only captured. */
  onOutput?: (text: string) => void;
  /** Goes to its stdin (a secret there never shows in argv). */
  input?: string;
  /** More environment for this run only. */
  env?: Record<string, string>;
}

/** Runs `pulumi <args>` in the workspace; its output is captured whatever else happens to it. */
export function runPulumi(ws: PulumiWorkspace, args: string[], options: PulumiRunOptions = {}): Promise<PulumiResult> {
  return runCaptured(path.join(ws.toolchain.bin, "pulumi"), [...args, "--non-interactive"], ws.projectDir, { ...pulumiEnv(ws), ...options.env }, options);
}

/**
 * Runs a command in cwd with env; its output is captured whatever else happens to it, and echoed, streamed and
 * fed from `options` as runPulumi's are. `gpu-rental up` runs Pulumi through it in the user's own environment.
 */
export function runCaptured(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, options: PulumiRunOptions = {}): Promise<PulumiResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    // Decoded as a stream: a character split between two chunks stays whole.
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk;
      if (options.echo) process.stdout.write(chunk);
      options.onOutput?.(chunk);
    });
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk;
      if (options.echo) process.stderr.write(chunk);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

/** Like runPulumi, but a non-zero exit is an error that carries Pulumi's output. */
export async function pulumi(ws: PulumiWorkspace, args: string[], options: PulumiRunOptions = {}): Promise<string> {
  const result = await runPulumi(ws, args, options);
  if (result.code !== 0) {
    // A shared backend's refusal (a lock, no connection) is said in one line with what to do.
    const refusal = backendRefusal(`${result.stdout}\n${result.stderr}`, stackOf(args));
    if (refusal) throw new Error(refusal);
    const detail = options.echo ? "" : `\n${result.stdout}\n${result.stderr}`.trimEnd();
    throw new Error(`pulumi ${args.join(" ")} failed with exit code ${result.code}${detail}`);
  }
  return result.stdout;
}

/** The stack a CLI run names (`--stack S`, or `stack init S`), for messages. */
function stackOf(args: string[]): string {
  const flag = args.indexOf("--stack");
  if (flag >= 0 && args[flag + 1]) return args[flag + 1];
  return args[0] === "stack" && args[1] === "init" && args[2] ? args[2] : "(the selected stack)";
}
