import * as path from "node:path";
import { backendRefusal } from "./backend";
import { parallelismFor } from "./parallelism";
import { PulumiResult, runCaptured } from "./pulumi";
import { stackStateOf } from "./stack-state";
import { projectRuntime } from "./project-file";
import { ensureToolchain, runtimeLanguage } from "./toolchain";

export interface UpOptions {
  /** The Pulumi project (the folder holding Pulumi.yaml). */
  programDir: string;
  stack: string;
  /** Resource operations at once; default one per resource of the stack (cli/parallelism.ts). */
  parallel?: number;
}

/**
 * `gpu-rental up`: a runner's deploy step. `pulumi up` of the stack in the runner's own Pulumi setup (its backend,
 * Pulumi home, passphrase or access token, as the workflow sets them), with the toolchain's `pulumi` where none is
 * installed, and Pulumi's progress as it prints it. A refusal of the shared backend (another run holds the stack,
 * the backend cannot be reached) ends it with one line saying what to do. Resolves with the exit code.
 */
export async function runUp(options: UpOptions): Promise<number> {
  const toolchain = ensureToolchain({ languages: [runtimeLanguage(projectRuntime(options.programDir).name)] });
  const env = { ...process.env, PATH: [toolchain.bin, process.env.PATH].join(path.delimiter), PULUMI_SKIP_UPDATE_CHECK: "true" };
  const pulumi = (args: string[], echo: boolean) =>
    runCaptured(path.join(toolchain.bin, "pulumi"), [...args, "--stack", options.stack, "--non-interactive"], options.programDir, env, { echo });
  const parallel = options.parallel ?? (await resourceCount(pulumi));
  const up = await pulumi(["up", "--yes", "--skip-preview", "--parallel", String(parallel)], true);
  const refusal = up.code === 0 ? undefined : backendRefusal(`${up.stdout}\n${up.stderr}`, options.stack);
  if (refusal) console.error(`\ngpu-rental up: ${refusal}`);
  return up.code;
}

/** One slot per resource the stack holds (a stack never deployed, or unreadable: the fresh stacks' default). */
async function resourceCount(pulumi: (args: string[], echo: boolean) => Promise<PulumiResult>): Promise<number> {
  const exported = await pulumi(["stack", "export"], false);
  try {
    return parallelismFor(exported.code === 0 ? stackStateOf(exported.stdout).resourceCount : 0);
  } catch {
    return parallelismFor(0);
  }
}
