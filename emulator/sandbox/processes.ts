import type { ChildProcess } from "node:child_process";
import * as fs from "node:fs";

/**
 * Processes found by a mark in their environment, which every process started under a run inherits (the engine,
 * its plugins and language hosts, programs, what they start, even past `setsid` or a dead parent): how the emulated
 * machines end their processes, and how `gpu-rental test` checks that nothing it started is left running. Linux
 * only (/proc); elsewhere none is found.
 */

/** The mark of a `gpu-rental test` run's processes. */
export const RUN_MARK = "GPU_RENTAL_TEST_RUN";

/** The run's mark in `env`, if any: passed on to the processes of emulated machines, whose environment is their own. */
export function runMarkOf(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return env[RUN_MARK] ? { [RUN_MARK]: env[RUN_MARK] } : {};
}

export interface MarkedProcess {
  pid: number;
  /** Its command line, as `ps` shows it. */
  command: string;
}

/** The live processes (zombies have ended) whose environment has `name=value`, or `name=value...` with `prefix`. */
export function markedProcesses(name: string, value: string, options: { prefix?: boolean } = {}): MarkedProcess[] {
  const needle = `${name}=${value}`;
  const found: MarkedProcess[] = [];
  for (const pid of pids()) {
    try {
      const environ = fs.readFileSync(`/proc/${pid}/environ`, "latin1");
      const hit = options.prefix ? environ.startsWith(needle) || environ.includes(`\0${needle}`) : `\0${environ}`.includes(`\0${needle}\0`);
      if (!hit || ended(pid)) continue;
      found.push({ pid, command: fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").join(" ").trim() });
    } catch {
      // not ours to read, or gone
    }
  }
  return found.filter((p) => p.pid !== process.pid);
}

/** Kills (SIGKILL) the processes that carry the mark. */
export function killMarked(name: string, value: string, options: { prefix?: boolean } = {}): MarkedProcess[] {
  const found = markedProcesses(name, value, options);
  for (const { pid } of found) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * The processes carrying the mark that are still running `graceMs` after the run ended (a process being stopped
 * may take a moment: the engine gives its plugins 5 s), polled every 100 ms; none as soon as none is left.
 */
export async function leftRunning(name: string, value: string, graceMs: number): Promise<MarkedProcess[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const left = markedProcesses(name, value);
    if (!left.length || Date.now() >= deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function pids(): number[] {
  try {
    return fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number);
  } catch {
    return [];
  }
}

function ended(pid: number): boolean {
  try {
    return /^\d+ \(.*\) [ZX]/s.test(fs.readFileSync(`/proc/${pid}/stat`, "latin1"));
  } catch {
    return true;
  }
}

/** Kills a process group (a child started `detached`, its group's leader), if it is still there. */
export function killGroup(child: ChildProcess | undefined, signal: NodeJS.Signals = "SIGKILL"): void {
  if (child?.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Resolves once a helper the emulator started (a machine's first process, its relay) says `ready` on its standard
 * output; rejects with `Error("<what>: <why>")`, its standard error the why, when it ends or errs first, or after
 * `timeoutMs`.
 */
export function untilReady(child: ChildProcess, what: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let said = "";
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new Error(`${what}: ${why}`));
    };
    const timer = setTimeout(() => fail(`not ready within ${timeoutMs / 1000} s ${said.trim()}`.trim()), timeoutMs);
    child.stdout!.on("data", (chunk: Buffer) => {
      if (!chunk.toString().includes("ready")) return;
      clearTimeout(timer);
      resolve();
    });
    child.stderr!.on("data", (chunk: Buffer) => (said += chunk.toString()));
    child.stdin?.on("error", () => undefined);
    child.on("error", (error) => fail(error.message));
    child.on("exit", (code, signal) => fail(said.trim() || `it ended (${signal ?? `status ${code}`})`));
  });
}
