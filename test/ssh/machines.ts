import { execFile, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { ed25519KeyPair } from "../../emulator";
import { emulator, http, TestEmulator } from "../helpers/emulator";

const run = promisify(execFile);

/** OpenSSH's client programs, where installed; the tests that need them are skipped (and say why) without. */
export const OPENSSH = ["ssh", "scp", "sftp"].every((program) => spawnSync("which", [program]).status === 0);
export const describeWithOpenSsh = (): jest.Describe => (OPENSSH ? describe : describe.skip);
if (!OPENSSH) console.warn("OpenSSH's ssh/scp/sftp are not installed: the tests that log in with them are skipped (apt-get install openssh-client).");

/** A user's key pair, as `ssh-keygen -t ed25519` leaves it: the private key file (0600) and its public line. */
export function userKey(dir: string, name = "id_ed25519"): { file: string; publicKey: string; privateKey: string } {
  const made = ed25519KeyPair(`${name}@test`);
  const file = path.join(dir, name);
  fs.writeFileSync(file, made.private, { mode: 0o600 });
  fs.writeFileSync(`${file}.pub`, `${made.public}\n`);
  return { file, publicKey: made.public, privateKey: made.private };
}

/** An emulator serving SSH, with a frozen clock and sandboxes in a folder of the test's own. */
export async function sshEmulator(dir: string, limits: Record<string, number> = {}): Promise<TestEmulator> {
  return emulator({ ssh: { sandboxes: path.join(dir, "machines"), hostKeyFile: path.join(dir, "host", "ssh_host_ed25519_key"), limits } });
}

/** Registers `publicKey` on the seeded account through the API, as `vastai create ssh-key` does. */
export async function registerKey(emu: TestEmulator, publicKey: string): Promise<number> {
  const res = await http(emu.url, "POST", "/api/v0/ssh/", { key: emu.apiKey, body: { ssh_key: publicKey } });
  if (res.status !== 200) throw new Error(`registering the key failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** Creates an instance of an SSH runtype on the cheapest offer; returns its id. */
export async function createInstance(emu: TestEmulator, request: Record<string, unknown> = {}): Promise<number> {
  const offers = (await http(emu.url, "POST", "/api/v0/bundles/", { key: emu.apiKey, body: { limit: 1, order: [["dph_total", "asc"]] } })).body.offers;
  const res = await http(emu.url, "PUT", `/api/v0/asks/${offers[0].id}/`, { key: emu.apiKey, body: { image: "ubuntu:22.04", runtype: "ssh_direct", ...request } });
  if (res.status !== 200) throw new Error(`creating the instance failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.new_contract;
}

export async function instance(emu: TestEmulator, id: number): Promise<any> {
  return (await http(emu.url, "GET", `/api/v0/instances/${id}/`, { key: emu.apiKey })).body.instances;
}

/**
 * Moves the clock past the boot and waits (real time: onstart and the endpoint are real processes and sockets)
 * until the instance reports `running`.
 */
export async function bootToRunning(emu: TestEmulator, id: number, timeoutMs = 20_000): Promise<any> {
  emu.marketplace.clock.advance(emu.marketplace.lifecycle.provisioningMs + emu.marketplace.lifecycle.loadingMs);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view = await instance(emu, id);
    if (view?.actual_status === "running") return view;
    if (Date.now() > deadline) throw new Error(`instance ${id} is still ${view?.actual_status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * The instance's home (/root) as this computer reaches it while its machine runs (the control API's `sandbox`:
 * through the machine's first process's root), to read what the machine's processes wrote.
 */
export async function homeOf(emu: TestEmulator, id: number): Promise<string> {
  const sandbox = (await http(emu.url, "GET", `/_emulator/instances/${id}/machine`)).body.sandbox;
  if (!sandbox) throw new Error(`instance ${id}'s machine is not running: its home is not reached`);
  return sandbox;
}

/** OpenSSH options for an emulated instance: this key only, the emulator's host key checked, never a prompt. */
export function sshOptions(emu: TestEmulator, keyFile: string): string[] {
  return [
    "-i", keyFile, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
    "-o", `UserKnownHostsFile=${emu.ssh!.knownHostsFile}`, "-o", "ConnectTimeout=10", "-F", "/dev/null",
  ];
}

/** Runs OpenSSH's `ssh` (or `scp`); resolves with its exit code and output, whatever the code. */
export async function openssh(program: "ssh" | "scp" | "sftp", args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = run(program, args, { timeout: 30_000, maxBuffer: 16 << 20 });
  if (input !== undefined) {
    child.child.stdin!.end(input);
  } else {
    child.child.stdin!.end();
  }
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** What an instance's machine is doing, as the clock goes: its processes asleep until some time, busy, down, or gone. */
async function machineState(emu: TestEmulator, id: number): Promise<{ gone: true } | { gone: false; up: boolean; sleepingUntil: number[] }> {
  const res = await http(emu.url, "GET", `/_emulator/instances/${id}/machine`);
  if (res.status === 404) return { gone: true };
  if (res.status !== 200) throw new Error(`GET /_emulator/instances/${id}/machine: ${res.status} ${JSON.stringify(res.body)}`);
  return { gone: false, up: res.body.up, sleepingUntil: res.body.sleeping_until };
}

/**
 * Moves the emulator's clock by `ms` as the instances' machines live it (their `date` and `sleep` follow the
 * clock): once every listed machine has settled (its processes wait on the clock, or its instance is stopped or
 * gone), then until each has settled again past the new time. Real time, bounded: the machines' processes (a
 * watchdog) are real; the test's steps are then exactly those the machines see. `ms` 0 only waits for them.
 */
export async function stepMachines(emu: TestEmulator, ids: number[], ms: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const settled = (state: Awaited<ReturnType<typeof machineState>>) =>
    state.gone || !state.up || state.sleepingUntil.some((s) => s * 1000 > emu.marketplace.clock.now());
  const untilSettled = async (what: string) => {
    for (;;) {
      const states = await Promise.all(ids.map((id) => machineState(emu, id)));
      if (states.every(settled)) return;
      if (Date.now() > deadline) throw new Error(`instances ${ids.join(", ")} ${what}: not after ${timeoutMs} ms (${JSON.stringify(states)})`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  await untilSettled("waiting on the clock");
  if (ms === 0) return;
  emu.marketplace.clock.advance(ms);
  await untilSettled(`past the clock's step of ${ms} ms`);
}
