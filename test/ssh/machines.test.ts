import * as fs from "node:fs";
import * as path from "node:path";
import { http, TestEmulator } from "../helpers/emulator";
import { bootToRunning, createInstance, describeWithOpenSsh, homeOf, instance, openssh, registerKey, sshEmulator, sshOptions, userKey } from "./machines";
import type { SFTPWrapper } from "ssh2";
import { exec } from "../../sdk";
import { MACHINE_MARK, markedProcesses } from "../../emulator";
import { ssh2 } from "../../sdk/ssh2";
import { DEFAULT_RESTART_MS } from "../../emulator/domain/instances";
import { scratch } from "../helpers/paths";

/** The emulated machine behind an instance: onstart at boot, processes ended at stop, limits on what runs. */
describe("emulated machines", () => {
  let emu: TestEmulator;
  let work: ReturnType<typeof scratch>;
  let key: ReturnType<typeof userKey>;
  const machine = async (id: number) => (await http(emu.url, "GET", `/_emulator/instances/${id}/machine`)).body;
  const run = (view: any, command: string, timeoutMs?: number) => exec(view, command, { privateKey: key.privateKey, hostKey: emu.ssh!.hostPublicKey, timeoutMs });

  const start = async (limits: Record<string, number> = {}) => {
    emu = await sshEmulator(work.dir, limits);
    await registerKey(emu, key.publicKey);
  };
  beforeEach(() => {
    work = scratch("machines");
    key = userKey(work.dir);
  });
  afterEach(async () => {
    await emu?.close();
    work.remove();
  });

  it("has run onstart, with the instance's env and key, by the time the instance is running; its output is in the control API", async () => {
    await start();
    const id = await createInstance(emu, {
      env: { DATASET: "imagenet", "-p 8888:8888": "1" },
      onstart: 'echo "dataset=$DATASET key=${#CONTAINER_API_KEY} id=$CONTAINER_ID"; echo prepared > ready.txt; echo oops >&2',
    });
    const before = await machine(id);
    expect(before.onstart).toBeNull();
    const created = await http(emu.url, "GET", `/api/v0/instances/${id}/`, { key: emu.apiKey });
    const view = await bootToRunning(emu, id);
    const report = (await machine(id)).onstart;
    expect(report).toMatchObject({ state: "exited", exit_code: 0, timed_out: false, output: `dataset=imagenet key=64 id=${id}\noops\n` });
    expect(fs.readFileSync(path.join(await homeOf(emu, id), "ready.txt"), "utf8")).toBe("prepared\n");
    expect(created.body.instances.actual_status).not.toBe("running");
    // An SSH session has the same key, and it is the instance's own: known to the service (403 on a read, where
    // a made-up key is 401), and able to stop its own instance, as the service lets a container do.
    const status = (key: string, method = "GET", body = "") =>
      run(view, `node -e 'fetch(process.argv[1], { method: "${method}", headers: { authorization: "Bearer " + process.argv[2], "content-type": "application/json" }${body && `, body: ${JSON.stringify(body)}`} }).then((r) => console.log(r.status))' ${emu.url}/api/v0/instances/${id}/ ${key}`);
    expect((await status("$CONTAINER_API_KEY")).stdout).toBe("403\n");
    expect((await status("made-up-key-123")).stdout).toBe("401\n");
    // Stopping ends the session that asked for it, before it hears the answer.
    await status("$CONTAINER_API_KEY", "PUT", JSON.stringify({ state: "stopped" }));
    expect((await instance(emu, id)).actual_status).toBe("exited");
  });

  it("gives each instance the account's environment variables as they were when it was created, its own env winning on a clash", async () => {
    await start();
    const client = emu.client();
    await client.envVars.create("hf_token", "hf-first");
    await client.envVars.create("WANDB_API_KEY", "account-wandb");
    const onstart = 'echo "hf=$HF_TOKEN wandb=$WANDB_API_KEY" >> seen.txt';
    const first = await createInstance(emu, { env: { WANDB_API_KEY: "own-wandb" }, onstart });
    await client.envVars.update("HF_TOKEN", "hf-second");
    const second = await createInstance(emu, { onstart });
    for (const id of [first, second]) await bootToRunning(emu, id);
    const seen = async (id: number) => fs.readFileSync(path.join(await homeOf(emu, id), "seen.txt"), "utf8");
    expect(await seen(first)).toBe("hf=hf-first wandb=own-wandb\n");
    expect(await seen(second)).toBe("hf=hf-second wandb=account-wandb\n");
    // A restart runs onstart with what the instance was created with, whatever the account holds now.
    await client.envVars.delete("HF_TOKEN");
    await http(emu.url, "PUT", `/api/v0/instances/${first}/`, { key: emu.apiKey, body: { state: "stopped" } });
    await http(emu.url, "PUT", `/api/v0/instances/${first}/`, { key: emu.apiKey, body: { state: "running" } });
    await bootToRunning(emu, first);
    expect(await seen(first)).toBe("hf=hf-first wandb=own-wandb\nhf=hf-first wandb=own-wandb\n");
    // Never shown by the service: the instance's answer holds no value of the account's.
    const shown = JSON.stringify((await http(emu.url, "GET", `/api/v0/instances/${second}/`, { key: emu.apiKey })).body);
    expect(shown).not.toMatch(/hf-first|hf-second|account-wandb/);
  });

  it("answers an SFTP session's writes in the order they were asked, as OpenSSH's server does (scp trusts only what was acknowledged in order)", async () => {
    await start();
    const view = await bootToRunning(emu, await createInstance(emu));
    const { Client } = ssh2();
    const connection = new Client();
    await new Promise<void>((resolve, reject) => connection.on("ready", resolve).on("error", reject).connect({ host: view.ssh_host, port: view.ssh_port, username: "root", privateKey: key.privateKey }));
    try {
      const sftp = await new Promise<SFTPWrapper>((resolve, reject) => connection.sftp((error, made) => (error ? reject(error) : resolve(made))));
      const handle = await new Promise<Buffer>((resolve, reject) => sftp.open("ordered.bin", "w", (error, made) => (error ? reject(error) : resolve(made))));
      // Many writes at once, each of one SFTP packet, as scp sends them: the server's threads may finish them in
      // any order, and the answers must still come in the order asked.
      const chunk = Buffer.alloc(30_000, 7);
      const answered: number[] = [];
      const write = (n: number) =>
        new Promise<void>((resolve, reject) => sftp.write(handle, chunk, 0, chunk.length, n * chunk.length, (error) => (error ? reject(error) : (answered.push(n), resolve()))));
      const count = 256;
      await Promise.all(Array.from({ length: count }, (_, n) => write(n)));
      await new Promise<void>((resolve, reject) => sftp.close(handle, (error) => (error ? reject(error) : resolve())));
      expect(answered).toEqual(Array.from({ length: count }, (_, n) => n));
      expect(fs.statSync(path.join(await homeOf(emu, view.id), "ordered.bin")).size).toBe(count * chunk.length);
    } finally {
      connection.end();
    }
  });

  it("runs onstart again at each start, and ends what a session started (and its children) when the instance stops", async () => {
    await start();
    const id = await createInstance(emu, { onstart: "echo boot >> boots.txt" });
    const view = await bootToRunning(emu, id);
    // A background process that outlives its session, as `nohup train.py &` does.
    await run(view, "nohup setsid sleep 300 > /dev/null 2>&1 & echo $! > sleeper.pid");
    // Its number is the machine's own (its PID namespace): this computer's is the machine's process numbered so inside.
    const inside = Number(fs.readFileSync(path.join(await homeOf(emu, id), "sleeper.pid"), "utf8"));
    const sleeper = markedProcesses(MACHINE_MARK, `${emu.ssh!.machines.markPrefix}${id}`).find((p) => nsPids(p.pid).at(-1) === inside)!;
    expect(nsPids(sleeper.pid)).toEqual([sleeper.pid, inside]);
    expect(sleeper.command).toMatch(/sleep 300$/);
    expect(alive(sleeper.pid)).toBe(true);
    await http(emu.url, "PUT", `/api/v0/instances/${id}/`, { key: emu.apiKey, body: { state: "stopped" } });
    await until(() => !alive(sleeper.pid));
    expect((await machine(id)).up).toBe(false);
    await http(emu.url, "PUT", `/api/v0/instances/${id}/`, { key: emu.apiKey, body: { state: "running" } });
    await bootToRunning(emu, id);
    expect(fs.readFileSync(path.join(await homeOf(emu, id), "boots.txt"), "utf8")).toBe("boot\nboot\n");
  });

  it("reboots (rebooting, then onstart again, its files kept) and recycles (recycling, then a fresh container: its files gone)", async () => {
    await start();
    const id = await createInstance(emu, { onstart: "echo boot >> boots.txt" });
    await bootToRunning(emu, id);
    const boots = async () => fs.readFileSync(path.join(await homeOf(emu, id), "boots.txt"), "utf8");
    for (const [how, status, after] of [["reboot", "rebooting", "boot\nboot\n"], ["recycle", "recycling", "boot\n"]]) {
      expect(await http(emu.url, "PUT", `/api/v0/instances/${how}/${id}/`, { key: emu.apiKey, body: {} })).toMatchObject({ status: 200, body: { success: true } });
      expect(await instance(emu, id)).toMatchObject({ actual_status: status, cur_state: "running" });
      expect((await machine(id)).up).toBe(false);
      emu.marketplace.clock.advance(DEFAULT_RESTART_MS);
      await bootToRunning(emu, id);
      expect(await boots()).toBe(after);
    }
  });

  it("mounts a local volume by -v V.<id>:<path>: what is written there outlives a stop, a recycle and the instance, for the next instance of that machine", async () => {
    await start();
    const call = async (method: string, url: string, body?: unknown) => (await http(emu.url, method, url, { key: emu.apiKey, body })).body;
    const [offer] = (await call("POST", "/api/v0/bundles/", { limit: 1, order: [["dph_total", "asc"]] })).offers;
    const volume = await call("PUT", "/api/v0/volumes/", { id: offer.id, size: 5, name: "cache" });
    // The volume is the machine's /data, this computer's folder for the volume.
    const mounted = { onstart: "echo boot-$CONTAINER_ID >> /data/log", env: { [`-v V.${volume.id}:/data`]: "1" } };
    const first = await createInstance(emu, mounted);
    await bootToRunning(emu, first);
    const log = () => fs.readFileSync(path.join(work.dir, "machines", ".volumes", String(volume.id), "log"), "utf8");
    for (const body of [{ state: "stopped" }, { state: "running" }]) await call("PUT", `/api/v0/instances/${first}/`, body);
    await bootToRunning(emu, first);
    await call("PUT", `/api/v0/instances/recycle/${first}/`, {});
    emu.marketplace.clock.advance(DEFAULT_RESTART_MS);
    await bootToRunning(emu, first);
    expect(log()).toBe(`boot-${first}\n`.repeat(3));
    expect(await call("DELETE", `/api/v0/volumes/?id=${volume.id}`, {})).toMatchObject({ error: "volume_in_use" });
    await call("DELETE", `/api/v0/instances/${first}/`, {});
    const second = await createInstance(emu, mounted);
    await bootToRunning(emu, second);
    expect(log()).toBe(`boot-${first}\n`.repeat(3) + `boot-${second}\n`);
    await call("DELETE", `/api/v0/instances/${second}/`, {});
    expect(await call("DELETE", `/api/v0/volumes/?id=${volume.id}`, {})).toMatchObject({ success: true });
    expect(fs.existsSync(path.join(work.dir, "machines", ".volumes", String(volume.id)))).toBe(false);
  });

  it("bounds run time and kept output: a command past the limit is killed, onstart's output keeps its tail", async () => {
    await start({ maxRunMs: 1_500, maxOutputBytes: 1_000 });
    const id = await createInstance(emu, { onstart: "for i in $(seq 1 500); do echo line-$i; done" });
    const view = await bootToRunning(emu, id);
    const report = (await machine(id)).onstart;
    expect(report.output.length).toBe(1_000);
    expect(report.output.endsWith("line-500\n")).toBe(true);
    expect(report.dropped_bytes).toBeGreaterThan(2_000);
    const started = Date.now();
    const long = await run(view, "echo started; sleep 30; echo never");
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(long.stdout).toBe("started\n");
    expect(long.stderr).toMatch(/killed after running 1.5 s/);
    expect(long.exitCode).toBeNull();
  });

  it("gives no machine to an args instance", async () => {
    await start();
    const id = await createInstance(emu, { runtype: "args", onstart: undefined, args_str: "python train.py" });
    emu.marketplace.clock.advance(60_000);
    const view = await instance(emu, id);
    expect(view.actual_status).toBe("running");
    expect(view.ssh_host).toBeNull();
    expect((await machine(id)).sandbox).toBeNull();
  });
});

describeWithOpenSsh()("an interactive shell over OpenSSH", () => {
  it("runs in a terminal (ssh -tt), with the session's exit status", async () => {
    const work = scratch("shell");
    const key = userKey(work.dir);
    const emu = await sshEmulator(work.dir);
    try {
      await registerKey(emu, key.publicKey);
      const view = await bootToRunning(emu, await createInstance(emu));
      const shell = await openssh("ssh", [...sshOptions(emu, key.file), "-tt", "-p", String(view.ssh_port), `root@${view.ssh_host}`], "tty -s && echo has-a-terminal\nexit 7\n");
      expect(shell.stdout).toMatch(/has-a-terminal/);
      expect(shell.code).toBe(7);
    } finally {
      await emu.close();
      work.remove();
    }
  });
});

/** A process's numbers in its PID namespace and those below, as /proc's status shows them (NSpid). */
function nsPids(pid: number): number[] {
  return (/^NSpid:\s+(.*)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "").split(/\s+/).map(Number);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
