import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { pulumiEnv } from "../../cli/pulumi";
import type { TestStack } from "./pulumi-stack";

export interface CutOffRun {
  /** The CLI's exit code; null when a signal ended it. */
  code: number | null;
  /** Whether the moment came (and the processes were signalled) before the run ended by itself. */
  signalled: boolean;
  /** Whether SIGKILL had to follow for processes still there after the grace period. */
  killed: boolean;
  output: string;
}

/**
 * Runs `pulumi <args>` on a stack the way a CI runner runs a job's step, in a session of its own, and cancels it
 * the way a runner does: once `moment()` holds (polled every 25 ms), `signal` goes to every process of the job
 * (the CLI, the language host and program, the provider processes: the engine puts each plugin in a process group
 * of its own, so the session is what holds them all), and SIGKILL to whatever is left after `graceMs`. Resolves
 * once no process of the session is left. `env` is the job's environment (default the stack's own).
 */
export async function runCutOff(
  stack: TestStack,
  args: string[],
  signal: NodeJS.Signals,
  moment: () => boolean,
  graceMs = 10_000,
  env: NodeJS.ProcessEnv = pulumiEnv(stack.ws),
): Promise<CutOffRun> {
  const child = spawn(path.join(stack.ws.toolchain.bin, "pulumi"), [...args, "--skip-preview", "--non-interactive", "--stack", stack.name], {
    cwd: stack.ws.projectDir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  let ended = false;
  void exited.then(() => (ended = true));
  const session = child.pid!;

  let signalled = false;
  const giveUp = Date.now() + MOMENT_WITHIN_MS;
  while (!ended && Date.now() < giveUp) {
    if (moment()) {
      signalled = true;
      break;
    }
    await pause(25);
  }
  // A moment that never came leaves nothing running: the run is killed, and `signalled` says so.
  if (!ended && !signalled) sendTo(session, "SIGKILL");
  let killed = false;
  if (signalled) {
    sendTo(session, signal);
    const until = Date.now() + graceMs;
    while (alive(session) && Date.now() < until) await pause(50);
    if (alive(session)) {
      killed = signal !== "SIGKILL";
      sendTo(session, "SIGKILL");
    }
  }
  const code = await exited;
  while (alive(session)) await pause(50);
  stack.transcript.push(output);
  return { code, signalled, killed, output };
}

/** How long a run may take to reach its moment. */
const MOMENT_WITHIN_MS = 60_000;

function sendTo(session: number, signal: NodeJS.Signals): void {
  for (const pid of processesOf(session)) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone already
    }
  }
}

function alive(session: number): boolean {
  return processesOf(session).length > 0;
}

/** The live processes of a session, from /proc (the session id is the 6th field of a process's stat line). */
function processesOf(session: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[3]) === session && fields[0] !== "Z") pids.push(Number(entry));
    } catch {
      // ended while read
    }
  }
  return pids;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
