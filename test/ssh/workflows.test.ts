import * as fs from "node:fs";
import * as path from "node:path";
import { copyFrom, copyTo, exec, SshError, waitForSsh, withInstance } from "../../sdk";
import { TestEmulator } from "../helpers/emulator";
import { bootToRunning, createInstance, instance, sshEmulator, userKey } from "./machines";
import { scratch } from "../helpers/paths";

/** The workflow library's SSH calls (exec, copies, waitForSsh, withInstance) against the emulator. */
describe("exec, copies and withInstance over SSH", () => {
  let emu: TestEmulator;
  let work: ReturnType<typeof scratch>;
  let key: ReturnType<typeof userKey>;
  const ssh = () => ({ privateKey: key.privateKey, hostKey: emu.ssh!.hostPublicKey });

  beforeEach(async () => {
    work = scratch("workflows");
    key = userKey(work.dir);
    emu = await sshEmulator(work.dir);
    await emu.client().sshKeys.add(key.publicKey);
  });
  afterEach(async () => {
    await emu.close();
    work.remove();
  });

  it("exec gives the exit code, stdout and stderr apart, takes stdin, and kills a command at its timeout", async () => {
    const view = await bootToRunning(emu, await createInstance(emu));
    expect(await exec(view, "echo out; echo err >&2; exit 4", ssh())).toMatchObject({ exitCode: 4, stdout: "out\n", stderr: "err\n", timedOut: false });
    expect((await exec(view, "tr a-z A-Z", { ...ssh(), stdin: "shout\n" })).stdout).toBe("SHOUT\n");
    const started = Date.now();
    const slow = await exec(view, "echo begun; sleep 20", { ...ssh(), timeoutMs: 500 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(slow).toMatchObject({ timedOut: true, exitCode: null, stdout: "begun\n" });
    const tail = await exec(view, "seq 1 100000", { ...ssh(), maxOutputBytes: 100 });
    expect(tail.stdout.endsWith("100000\n")).toBe(true);
    expect(tail.stdout.length).toBe(100);
    expect(tail.droppedBytes).toBeGreaterThan(500_000);
  });

  it("copyTo and copyFrom move files both ways", async () => {
    const view = await bootToRunning(emu, await createInstance(emu));
    const local = path.join(work.dir, "weights.bin");
    fs.writeFileSync(local, Buffer.alloc(2_000_000, 7));
    await copyTo(view, local, "weights.bin", ssh());
    expect((await exec(view, "wc -c < weights.bin", ssh())).stdout.trim()).toBe("2000000");
    await exec(view, "echo '{\"loss\": 0.12}' > metrics.json", ssh());
    await copyFrom(view, "metrics.json", path.join(work.dir, "metrics.json"), ssh());
    expect(JSON.parse(fs.readFileSync(path.join(work.dir, "metrics.json"), "utf8"))).toEqual({ loss: 0.12 });
    await expect(copyFrom(view, "missing.txt", path.join(work.dir, "x"), ssh())).rejects.toThrow(/copy failed: No such file/);
  });

  it("refuses a host whose key is not the one expected, and a key not registered", async () => {
    const view = await bootToRunning(emu, await createInstance(emu));
    const other = userKey(work.dir, "other");
    await expect(exec(view, "true", { ...ssh(), hostKey: other.publicKey })).rejects.toThrow(SshError);
    await expect(exec(view, "true", { privateKey: other.privateKey })).rejects.toThrow(/authentication methods failed/);
    // Registered on the account later, a key reaches the existing instance once attached to it.
    await emu.client().sshKeys.add(other.publicKey);
    await expect(exec(view, "true", { privateKey: other.privateKey })).rejects.toThrow(SshError);
    await emu.client().sshKeys.attach(view.id, other.publicKey);
    expect((await exec(view, "echo in", { privateKey: other.privateKey })).stdout).toBe("in\n");
  });

  it("waitForSsh waits for the boot and fails, saying why, when it never comes", async () => {
    const id = await createInstance(emu);
    const loading = await instance(emu, id);
    await expect(waitForSsh(loading, { ...ssh(), timeoutMs: 600, intervalMs: 100 })).rejects.toThrow(/did not take an SSH login within 0.6 s: .*ECONNREFUSED/);
    const waiting = waitForSsh(loading, { ...ssh(), timeoutMs: 20_000, intervalMs: 50 });
    await bootToRunning(emu, id);
    await expect(waiting).resolves.toBeUndefined();
  });

  it("withInstance rents, runs a script and collects its results, and destroys the instance even when the job throws", async () => {
    // The emulator's clock is frozen: a running clock makes the boot take its usual seconds instead.
    emu.marketplace.lifecycle = { provisioningMs: 0, loadingMs: 0 };
    const client = emu.client();
    const steps: string[] = [];
    const result = await withInstance(
      client,
      { filters: { num_gpus: { eq: 1 } } },
      { request: { image: "pytorch/pytorch", env: { EPOCHS: "3" } }, ssh: { ...ssh(), waitTimeoutMs: 20_000 }, wait: { pollMs: 20 }, onProgress: (step) => steps.push(step) },
      async (session) => {
        const run = await session.runScript('set -e\nfor e in $(seq 1 "$EPOCHS"); do echo "epoch $e"; done > train.log\necho done');
        const log = path.join(work.dir, "train.log");
        await session.copyFrom("train.log", log);
        return { exitCode: run.exitCode, stdout: run.stdout, log: fs.readFileSync(log, "utf8"), id: session.instance.id };
      },
    );
    expect(result).toMatchObject({ exitCode: 0, stdout: "done\n", log: "epoch 1\nepoch 2\nepoch 3\n" });
    expect(steps).toEqual(["rented", "running", "ssh ready", "destroyed"]);
    expect(await client.instances.get(result.id)).toBeNull();
    expect(fs.existsSync(path.join(work.dir, "machines", String(result.id)))).toBe(false);

    let thrownId = 0;
    await expect(
      withInstance(client, {}, { request: { image: "ubuntu" }, ssh: ssh(), wait: { pollMs: 20 } }, async (session) => {
        thrownId = session.instance.id;
        throw new Error("the job failed");
      }),
    ).rejects.toThrow("the job failed");
    expect(await client.instances.get(thrownId)).toBeNull();
    expect(await client.instances.list()).toEqual([]);
  });
});
