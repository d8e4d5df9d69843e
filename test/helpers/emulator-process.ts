import { ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "..", "..");

export interface EmulatorProcess {
  url: string;
  /** The seeded user's key, as it printed it. */
  apiKey: string;
  pid: number;
  process: ChildProcess;
  /** What it printed on stderr so far. */
  errors(): string;
  /** What it printed on stdout so far. */
  output(): string;
  /** Resolves with the match once its stdout matches `pattern` (within `timeoutMs`). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Stops it as a user does (SIGTERM) and waits until it is gone. */
  stop(): Promise<void>;
}

/** How the emulator's process is started, beyond its arguments and environment. */
export interface EmulatorLaunch {
  /** A command it runs through (`setpriv --reuid=1000 --`: as another user of this computer). */
  through?: string[];
  /** Told of the process as soon as it is spawned (its standard input a pipe), before it has printed anything. */
  started?: (child: ChildProcess) => void;
}

/**
 * The one way tests and benches start an emulator in a process of its own: `gpu-rental emulator` as users run
 * it (the built command, from dist/, which `pretest` builds; it starts in well under a second), for tests that
 * kill it, start several at once, or measure the emulator itself (its memory, which `GET /_emulator/state`
 * shows). Resolves once it prints its URL and key; rejects with its stderr if it exits first. Its rate limits are
 * off unless `env` says otherwise (GPU_RENTAL_EMULATOR_RATE_LIMITS: ""): these tests are not about them.
 */
export function emulatorProcess(args: string[] = [], env: Record<string, string> = {}, launch: EmulatorLaunch = {}): Promise<EmulatorProcess> {
  const command = [...(launch.through ?? []), process.execPath, path.join(ROOT, "bin", "gpu-rental.js"), "emulator", ...args];
  const child = spawn(command[0], command.slice(1), {
    stdio: [launch.started ? "pipe" : "ignore", "pipe", "pipe"],
    env: { ...process.env, GPU_RENTAL_EMULATOR_RATE_LIMITS: "off", ...env },
  });
  launch.started?.(child);
  let out = "";
  let errors = "";
  child.stderr!.on("data", (chunk) => (errors += chunk));
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(Object.assign(new Error(`emulator exited ${code}: ${errors.trim()}`), { stderr: errors, code }));
    child.once("exit", onExit);
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const url = /GPU_RENTAL_API_URL=(\S+)/.exec(out)?.[1];
      const apiKey = /GPU_RENTAL_API_KEY=(\S+)/.exec(out)?.[1];
      if (!url || !apiKey) return;
      child.off("exit", onExit);
      const waitFor = async (pattern: RegExp, timeoutMs = 30_000) => {
        const deadline = Date.now() + timeoutMs;
        while (Date.now() < deadline) {
          const match = pattern.exec(out);
          if (match) return match;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        throw new Error(`the emulator did not print ${pattern} within ${timeoutMs} ms; it printed:\n${out}${errors}`);
      };
      resolve({ url, apiKey, pid: child.pid!, process: child, errors: () => errors, output: () => out, waitFor, stop: () => stop(child, "SIGTERM") });
    });
  });
}

/** Kills it with SIGKILL (nothing of it runs on) and waits until it is gone. */
export function killHard(emulator: EmulatorProcess): Promise<void> {
  return stop(emulator.process, "SIGKILL");
}

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}
