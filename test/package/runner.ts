import { execFile } from "node:child_process";
import * as path from "node:path";
import { promisify } from "node:util";
import { ensureToolchain } from "../../cli/toolchain";
import { TRANSPILE_ONLY } from "../helpers/pulumi-stack";

const run = promisify(execFile);

/**
 * The environment a runner gives the steps after `pulumi/actions`: the Pulumi CLI on PATH. (The engine does not
 * type-check the example again: test/package/examples-types.test.ts type-checks every example.)
 */
export function runnerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...TRANSPILE_ONLY, CI: "true", PATH: `${ensureToolchain().bin}${path.delimiter}${process.env.PATH}`, ...extra };
}

/** Runs one `run:` step the way a GitHub runner does (bash, -e, in the checkout). */
export async function runStep(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run("bash", ["-e", "-c", command], { cwd, env, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, output: stdout + stderr };
  } catch (error: any) {
    return { code: error.code ?? 1, output: `${error.stdout}${error.stderr}` };
  }
}
