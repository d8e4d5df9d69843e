import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

/** How to run the Pulumi CLI privately: own home, local file backend, no network, no plugin downloads. */
export interface PulumiWorkspace {
  /** Folder holding `pulumi` and `pulumi-language-nodejs`. */
  toolchainBin: string;
  /** The project folder (holding Pulumi.yaml). */
  projectDir: string;
  /** A private folder for Pulumi's home, the file backend and the passphrase. */
  stateDir: string;
  /** Extra environment for the engine and the provider host (e.g. GPU_RENTAL_API_URL). */
  env?: Record<string, string>;
}

export interface PulumiResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment of every pulumi call of a workspace. */
export function pulumiEnv(ws: PulumiWorkspace): NodeJS.ProcessEnv {
  fs.mkdirSync(path.join(ws.stateDir, "backend"), { recursive: true });
  const passphraseFile = path.join(ws.stateDir, "passphrase");
  if (!fs.existsSync(passphraseFile)) {
    // The passphrase that encrypts this workspace's stack secrets; private to the user, never printed.
    fs.writeFileSync(passphraseFile, require("node:crypto").randomBytes(24).toString("hex"), { mode: 0o600 });
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: [ws.toolchainBin, process.env.PATH].join(path.delimiter),
    PULUMI_HOME: path.join(ws.stateDir, "home"),
    PULUMI_BACKEND_URL: `file://${path.join(ws.stateDir, "backend")}`,
    PULUMI_CONFIG_PASSPHRASE_FILE: passphraseFile,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: "true",
    ...ws.env,
  };
  delete env.PULUMI_CONFIG_PASSPHRASE;
  delete env.PULUMI_ACCESS_TOKEN;
  return env;
}

/**
 * Runs `pulumi <args>` in the workspace. `echo` streams its output to this process's (so a user sees Pulumi's
 * own progress); it is captured either way.
 */
export function runPulumi(
  ws: PulumiWorkspace,
  args: string[],
  options: { echo?: boolean; input?: string } = {},
): Promise<PulumiResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(ws.toolchainBin, "pulumi"), [...args, "--non-interactive"], {
      cwd: ws.projectDir,
      env: pulumiEnv(ws),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
      if (options.echo) process.stdout.write(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
      if (options.echo) process.stderr.write(chunk);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

/** Like runPulumi, but a non-zero exit is an error that carries Pulumi's output. */
export async function pulumi(ws: PulumiWorkspace, args: string[], options: { echo?: boolean; input?: string } = {}): Promise<string> {
  const result = await runPulumi(ws, args, options);
  if (result.code !== 0) {
    const detail = options.echo ? "" : `\n${result.stdout}\n${result.stderr}`.trimEnd();
    throw new Error(`pulumi ${args.join(" ")} failed with exit code ${result.code}${detail}`);
  }
  return result.stdout;
}
