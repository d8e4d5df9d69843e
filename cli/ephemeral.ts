import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type * as automation from "@pulumi/pulumi/automation";
import { pulumi, pulumiEnv, PulumiWorkspace } from "./pulumi";
import { ensureToolchain } from "./toolchain";

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
}

export type Automation = typeof automation;

/**
 * Runs `use` with a new stack of the program on a private local backend (its own Pulumi home, file backend and
 * passphrase in a temporary folder), driven through Pulumi's Automation API, then removes the stack, its config
 * file and the folder, whatever happened. Nothing of it outlives the call.
 */
export async function withEphemeralStack<T>(
  options: EphemeralStackOptions,
  use: (stack: automation.Stack, auto: Automation, ws: PulumiWorkspace) => Promise<T>,
): Promise<T> {
  const auto = loadAutomation();
  const programDir = path.resolve(options.programDir);
  if (!fs.existsSync(path.join(programDir, "Pulumi.yaml"))) throw new Error(`${programDir} holds no Pulumi.yaml: give the folder of a Pulumi project.`);
  const configFile = path.join(programDir, `Pulumi.${options.stackName}.yaml`);
  if (fs.existsSync(configFile)) throw new Error(`${configFile} exists already: choose another stack name (--stack), this one would overwrite it.`);

  const toolchain = ensureToolchain();
  const ws: PulumiWorkspace = { toolchain, projectDir: programDir, stateDir: fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-stack-")), env: options.env };
  try {
    const env = pulumiEnv(ws);
    const workspace = await auto.LocalWorkspace.create({
      workDir: programDir,
      pulumiHome: env.PULUMI_HOME,
      envVars: env,
      // A folder named bin is the CLI's own layout (root/bin/pulumi); anything else is found on the PATH above.
      pulumiCommand: await auto.PulumiCommand.get({ root: path.basename(toolchain.bin) === "bin" ? path.dirname(toolchain.bin) : undefined, skipVersionCheck: true }),
    });
    const stack = await auto.Stack.create(options.stackName, workspace);
    try {
      if (options.config && Object.keys(options.config).length) {
        await stack.setAllConfig(Object.fromEntries(Object.entries(options.config).map(([key, value]) => [key, { value }])));
      }
      for (const [key, value] of Object.entries(options.secrets ?? {})) {
        await pulumi(ws, ["config", "set", "--secret", key, "--stack", options.stackName], { input: value });
      }
      return await use(stack, auto, ws);
    } finally {
      await workspace.removeStack(options.stackName, { force: true }).catch(() => undefined);
    }
  } finally {
    fs.rmSync(configFile, { force: true });
    fs.rmSync(ws.stateDir, { recursive: true, force: true });
  }
}

/** Pulumi's Automation API from the @pulumi/pulumi the program uses (a peer dependency of gpu-rental). */
function loadAutomation(): Automation {
  try {
    return require("@pulumi/pulumi/automation");
  } catch (error) {
    throw new Error(`@pulumi/pulumi is not installed beside gpu-rental (it is a peer dependency): run \`npm install @pulumi/pulumi\`. (${(error as Error).message})`);
  }
}
