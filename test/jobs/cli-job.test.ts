import { ChildProcess, execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { emulator, TestEmulator } from "../helpers/emulator";
import { userKey } from "../ssh/machines";
import { scratch } from "../helpers/paths";

const ROOT = path.resolve(__dirname, "..", "..");
const BIN = path.join(ROOT, "bin", "gpu-rental.js");
const EXAMPLE = path.join(ROOT, "examples", "interruptible-job");

/**
 * `gpu-rental job run|status|cancel` on examples/interruptible-job, against the emulator with its machines, time
 * rehearsed (`--emulated-time`: the watcher moves the emulator's frozen clock).
 */
describe("gpu-rental job", () => {
  let emu: TestEmulator;
  let work: ReturnType<typeof scratch>;
  let key: ReturnType<typeof userKey>;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    work = scratch("cli-job");
    key = userKey(work.dir);
    emu = await emulator({ ssh: { sandboxes: path.join(work.dir, "machines"), hostKeyFile: path.join(work.dir, "host", "key") } });
    await emu.client().sshKeys.add(key.publicKey);
    env = { ...process.env, GPU_RENTAL_API_URL: emu.url, GPU_RENTAL_API_KEY: emu.apiKey, SSH_KEY_FILE: key.file };
  });
  afterAll(async () => {
    await emu?.close();
    work?.remove();
  });

  const volume = async () => {
    const client = emu.client();
    const [offer] = await client.volumes.searchNetworkOffers({});
    return String((await client.volumes.createNetwork({ offerId: Number(offer.id), size: 1 })).id);
  };
  /** The example copied, so its kept state is the test's own. */
  const example = (name: string) => {
    const dir = path.join(work.dir, name);
    fs.cpSync(EXAMPLE, dir, { recursive: true });
    return path.join(dir, "job.yaml");
  };
  const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    promisify(execFile)(process.execPath, [BIN, ...args], { env: { ...env, ...extra }, timeout: 240_000 }).then(
      (done) => ({ code: 0, ...done }),
      (failed) => ({ code: failed.code as number, stdout: failed.stdout as string, stderr: failed.stderr as string }),
    );
  /** The account's instances: what bills. */
  const billing = async () => emu.client().instances.list();
  const until = async (done: () => boolean, ms: number, what: string) => {
    for (const start = Date.now(); !done(); await new Promise((r) => setTimeout(r, 100))) if (Date.now() - start > ms) throw new Error(`${what}: not after ${ms} ms`);
  };

  it("refuses bad input before anything is rented: no image, a bid ceiling under the market's minimum, a checkpoint volume that does not exist", async () => {
    const file = example("bad");
    const dir = path.dirname(file);
    const ok = { CHECKPOINT_VOLUME: await volume() };
    fs.writeFileSync(path.join(dir, "no-image.yaml"), fs.readFileSync(file, "utf8").replace(/^image: .*$/m, ""));
    const before = emu.marketplace.stats.offersAccepted;
    const noImage = await cli(["job", "run", path.join(dir, "no-image.yaml"), "--emulated-time"], ok);
    expect(noImage).toMatchObject({ code: 1, stderr: expect.stringContaining("image") });
    const low = await cli(["job", "run", file, "--emulated-time"], { ...ok, MAX_BID: "0.001" });
    expect(low).toMatchObject({ code: 1, stderr: expect.stringMatching(/maxBidPerHour 0\.001 is under the market's minimum bid .* \$\/hour now\): raise it/) });
    const noVolume = await cli(["job", "run", file, "--emulated-time"], { CHECKPOINT_VOLUME: "987654" });
    expect(noVolume).toMatchObject({ code: 1, stderr: expect.stringContaining("checkpoints.volumeId 987654 is not a volume of this account") });
    expect(emu.marketplace.stats.offersAccepted).toBe(before);
    expect(await billing()).toEqual([]);
  }, 60_000);

  it("a watcher killed with -9 is taken over by the next from the kept state, without a second rental; the report says what it cost", async () => {
    const file = example("takeover");
    const extra = { CHECKPOINT_VOLUME: await volume(), STEPS: "30", MAX_BID: "1" };
    const before = emu.marketplace.stats.offersAccepted;
    const stateFile = path.join(path.dirname(file), ".gpu-rental", "job-train-demo.json");
    const first: ChildProcess = spawn(process.execPath, [BIN, "job", "run", file, "--emulated-time"], { env: { ...env, ...extra }, stdio: "ignore" });
    const state = () => (fs.existsSync(stateFile) ? JSON.parse(fs.readFileSync(stateFile, "utf8")) : undefined);
    // Killed once its command has run a while (its instance up and read at least once).
    await until(() => state()?.phase === "running" && emu.marketplace.clock.now() - state().startedAt > 20 * 60_000, 120_000, "the job running");
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    const kept = state();
    expect((await billing()).map((i) => i.id)).toEqual([kept.instanceId]);

    const status = await cli(["job", "status", file, "--json"], extra);
    expect(JSON.parse(status.stdout)).toMatchObject({ outcome: "running", rentals: [{ instanceId: kept.instanceId }] });
    const second = await cli(["job", "run", file, "--emulated-time", "--json"], extra);
    expect(second.code).toBe(0);
    const report = JSON.parse(second.stdout);
    expect(report).toMatchObject({ outcome: "succeeded", rentals: [{ instanceId: kept.instanceId, end: "succeeded" }] });
    expect(report.events.map((e: { what: string }) => e.what)).toContain("taken over by a new watcher");
    expect(emu.marketplace.stats.offersAccepted - before).toBe(1);
    expect(report.spend).toBeGreaterThan(0);
    expect(await billing()).toEqual([]);
    // Its last checkpoint is the last step: the command resumed nowhere, it ran on under the new watcher.
    expect(fs.readFileSync(path.join(work.dir, "machines", ".volumes", extra.CHECKPOINT_VOLUME, "step"), "utf8").trim()).toBe("30");
  }, 240_000);

  it("a command that fails the same way twice ends with its error and nothing billing; cancel leaves an ended job as it is", async () => {
    const file = example("failing");
    fs.writeFileSync(path.join(path.dirname(file), "train.sh"), 'echo "loading data"; sleep 60; echo "CUDA error: out of memory" >&2; exit 3\n');
    const extra = { CHECKPOINT_VOLUME: await volume(), MAX_BID: "1" };
    const failed = await cli(["job", "run", file, "--emulated-time", "--json"], extra);
    expect(failed.code).toBe(1);
    const report = JSON.parse(failed.stdout);
    expect(report).toMatchObject({ outcome: "failed", error: "the command failed the same way twice: exit 3: CUDA error: out of memory", restarts: 1 });
    expect(await billing()).toEqual([]);

    // An ended job stays ended: cancel finds nothing to do.
    const again = await cli(["job", "cancel", file, "--json"], extra);
    expect(JSON.parse(again.stdout).outcome).toBe("failed");
  }, 240_000);

  it("cancel ends a job its watcher left running: its instance destroyed, the job cancelled", async () => {
    const file = example("cancelled");
    const extra = { CHECKPOINT_VOLUME: await volume(), MAX_BID: "1" };
    const stateFile = path.join(path.dirname(file), ".gpu-rental", "job-train-demo.json");
    const watcher = spawn(process.execPath, [BIN, "job", "run", file, "--emulated-time"], { env: { ...env, ...extra }, stdio: ["ignore", "pipe", "inherit"] });
    let progress = "";
    watcher.stdout!.on("data", (chunk) => (progress += chunk));
    await until(() => /running on instance \d+/.test(progress), 120_000, "the job running");
    watcher.kill("SIGKILL");
    await new Promise((resolve) => watcher.once("exit", resolve));
    // Its progress: the job's time, state, instance, restarts, outbids, spend so far, and what happened.
    expect(progress).toMatch(/^\[0h00m\] starting on instance \d+, 0 restart\(s\), 0 outbid\(s\), spent 0\.0000 \$: rented instance \d+ \(offer \d+, bid [\d.]+ \$\/hour\)$/m);
    expect(progress).toMatch(/^\[0h\d\dm\] running on instance \d+, 0 restart\(s\), 0 outbid\(s\), spent [\d.]+ \$/m);
    expect(fs.existsSync(stateFile)).toBe(true);
    expect((await billing()).length).toBe(1);
    const cancelled = await cli(["job", "cancel", file, "--json"], extra);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ outcome: "cancelled", rentals: [{ end: "cancelled" }] });
    expect(await billing()).toEqual([]);
    const status = await cli(["job", "status", file], extra);
    expect(status.stdout).toContain("job train-demo");
    expect(status.stdout).toContain(": cancelled: cancelled");
  }, 180_000);
});
