import { ChildProcess, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as http2 from "node:http2";
import * as os from "node:os";
import * as path from "node:path";
import { isRunning as alive } from "../helpers/processes";
import { REPO_ROOT } from "../helpers/paths";

/**
 * The plugin process (plugin/index.js of the repository, on its dist/) never outlives the engine that started it:
 * it ends when the engine's connection closes, when its stdin (the engine's pipe) ends, when its parent is gone,
 * and on SIGTERM and SIGINT, as the engine stops it.
 */
const PLUGIN = path.join(REPO_ROOT, "plugin", "index.js");

function startPlugin(stdin: "pipe" | "ignore" = "pipe"): Promise<{ child: ChildProcess; port: number; exited: Promise<number> }> {
  const child = spawn(process.execPath, [PLUGIN], { stdio: [stdin, "pipe", "inherit"] });
  const exited = new Promise<number>((resolve) => child.once("exit", () => resolve(Date.now())));
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the plugin exited ${code} before it served`)));
    child.stdout!.once("data", (chunk) => resolve({ child, port: Number(String(chunk).trim()), exited }));
  });
}

it.concurrent("ends 1 s after the engine's connection closed, and not while it is open", async () => {
  const { child, port, exited } = await startPlugin();
  const session = http2.connect(`http://127.0.0.1:${port}`);
  await new Promise((resolve) => session.once("connect", resolve));
  const stillThere = await Promise.race([exited.then(() => false), new Promise((resolve) => setTimeout(() => resolve(true), 1500))]);
  expect(stillThere).toBe(true);
  const closed = Date.now();
  session.close();
  const ended = await exited;
  expect(child.signalCode).toBe("SIGTERM");
  expect(ended - closed).toBeGreaterThanOrEqual(900);
  expect(ended - closed).toBeLessThan(5000);
});

it.concurrent("ends at once when its stdin, the engine's pipe, ends", async () => {
  const { child, exited } = await startPlugin();
  const closed = Date.now();
  child.stdin!.end();
  expect((await exited) - closed).toBeLessThan(2000);
});

it.concurrent.each(["SIGTERM", "SIGINT"] as const)("ends on %s", async (signal) => {
  const { child, exited } = await startPlugin();
  child.kill(signal);
  await exited;
  expect(child.exitCode !== null || child.signalCode !== null).toBe(true);
});

it.concurrent("ends when the process that started it is gone (stdin not a pipe)", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-orphan-"));
  try {
    // A shell starts the plugin in the background, waits until it serves, and exits: the plugin's parent is gone.
    const script = `"${process.execPath}" "${PLUGIN}" </dev/null >"${dir}/port" 2>/dev/null & while [ ! -s "${dir}/port" ]; do sleep 0.05; done; echo $!`;
    const shell = spawnSync("bash", ["-c", script], { encoding: "utf8", timeout: 20_000 });
    const pid = Number(shell.stdout.trim());
    expect(pid).toBeGreaterThan(0);
    const started = Date.now();
    while (alive(pid) && Date.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(pid)).toBe(false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
