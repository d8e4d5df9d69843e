import { ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "..", "..");

export interface EmulatorProcess {
  url: string;
  apiKey: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * `gpu-rental emulator` in a process of its own, run from the sources (so no build is needed), for tests that
 * measure the emulator itself (its memory, which `GET /_emulator/state` shows) or hammer it from another
 * program. It is reached over HTTP only: the control API moves its clock and shows its state.
 */
export function emulatorProcess(args: string[] = []): Promise<EmulatorProcess> {
  const launcher = `require(${JSON.stringify(path.join(ROOT, "cli", "index.ts"))}).main(process.argv.slice(1)).catch((e) => { console.error(e); process.exit(1); })`;
  const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", "-e", launcher, "emulator", ...args], {
    cwd: ROOT,
    env: { ...process.env, TS_NODE_PROJECT: path.join(ROOT, "tsconfig.json") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let errors = "";
  child.stderr!.on("data", (chunk) => (errors += chunk));
  return new Promise((resolve, reject) => {
    let out = "";
    const onExit = (code: number | null) => reject(new Error(`the emulator exited (${code}) before it listened: ${errors}`));
    child.once("exit", onExit);
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const url = /GPU_RENTAL_API_URL=(\S+)/.exec(out)?.[1];
      const apiKey = /GPU_RENTAL_API_KEY=(\S+)/.exec(out)?.[1];
      if (!url || !apiKey) return;
      child.off("exit", onExit);
      resolve({ url, apiKey, pid: child.pid!, stop: () => stop(child) });
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}
