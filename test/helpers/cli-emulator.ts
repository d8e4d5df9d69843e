import { ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import { REPO_ROOT } from "./provider-host";

export interface CliEmulator {
  url: string;
  process: ChildProcess;
  /** What it printed on stderr so far. */
  errors(): string;
}

/**
 * `gpu-rental emulator` as users run it (the built command, started in well under a second), for tests that
 * kill it or start several at once. Resolves once it prints its URL; rejects with its stderr if it exits first.
 */
export function cliEmulator(args: string[], env: Record<string, string> = {}): Promise<CliEmulator> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, "bin", "gpu-rental.js"), "emulator", ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let out = "";
  let errors = "";
  child.stderr!.on("data", (chunk) => (errors += chunk));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const url = /GPU_RENTAL_API_URL=(\S+)/.exec(out)?.[1];
      if (url) resolve({ url, process: child, errors: () => errors });
    });
    child.once("exit", (code) => reject(Object.assign(new Error(`emulator exited ${code}: ${errors.trim()}`), { stderr: errors, code })));
  });
}

/** Kills it with SIGKILL (nothing of it runs on) and waits until it is gone. */
export async function killHard(emulator: CliEmulator): Promise<void> {
  if (emulator.process.exitCode !== null || emulator.process.signalCode !== null) return;
  const gone = new Promise((resolve) => emulator.process.once("exit", resolve));
  emulator.process.kill("SIGKILL");
  await gone;
}
