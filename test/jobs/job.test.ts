import * as fs from "node:fs";
import * as path from "node:path";
import { GpuRentalClient, JobSpecInput, runJob } from "../../sdk";
import { emulatedTime } from "../../cli/emulated-time";
import { emulator, http, TestEmulator } from "../helpers/emulator";
import { userKey } from "../ssh/machines";
import { scratch } from "../helpers/paths";

const TRAIN = fs.readFileSync(path.resolve(__dirname, "..", "..", "examples", "interruptible-job", "train.sh"), "utf8");

/**
 * Jobs that survive outbids (sdk/workflows/job.ts), on the emulator with its machines: the clock is frozen and the
 * watcher moves it (cli/emulated-time.ts), a training step (two minutes) at a time, waiting for the machines to catch
 * up at each. The job: 180 steps of two minutes, a checkpoint every five (ten minutes), six hours in all.
 */
describe("runJob on the emulator's clock", () => {
  let emu: TestEmulator;
  let work: ReturnType<typeof scratch>;
  let key: ReturnType<typeof userKey>;
  let client: GpuRentalClient;

  beforeAll(async () => {
    work = scratch("jobs");
    key = userKey(work.dir);
    emu = await emulator({ ssh: { sandboxes: path.join(work.dir, "machines"), hostKeyFile: path.join(work.dir, "host", "key") } });
    client = emu.client();
    await client.sshKeys.add(key.publicKey);
  });
  afterAll(async () => {
    await emu?.close();
    work?.remove();
  });

  const volume = async () => {
    const [offer] = await client.volumes.searchNetworkOffers({});
    return Number((await client.volumes.createNetwork({ offerId: Number(offer.id), size: 1 })).id);
  };
  const stepsLog = (volumeId: number) => fs.readFileSync(path.join(work.dir, "machines", ".volumes", String(volumeId), "steps.log"), "utf8");
  const spec = (volumeId: number, extra: Partial<JobSpecInput> = {}): JobSpecInput => ({
    name: "train", image: "ubuntu:22.04", command: TRAIN, env: { STEPS: "180", STEP_SECONDS: "120", CHECKPOINT_EVERY: "5" }, pollInterval: "2m", statusInterval: "10m",
    checkpoints: { volumeId, mountPath: "/ckpt" }, ...extra,
  });

  it("a 6-hour job, outbid once an hour on average, finishes with every step, for at most 60 % of the same job on demand", async () => {
    await http(emu.url, "PUT", "/_emulator/settings", { body: { outbids: { perHour: 1 } } });
    const [cheapest] = await client.offers.search({ type: "on-demand", order: [["dph_total", "asc"]], limit: 1 });
    const clock = await emulatedTime(emu.url, { stepMs: 120_000 });
    const bidVolume = await volume();
    // The job's client reads the same clock: its rentals' claims on offers are timed by it.
    const jobClient = emu.client({ clock });
    const bid = await runJob(jobClient, spec(bidVolume, { interruptible: { maxBidPerHour: Number((cheapest.dph_total * 0.5).toFixed(4)) } }), {
      sshPrivateKey: key.privateKey, clock, onProgress: (s, event) => process.env.JOB_DEBUG && process.stderr.write(`${new Date().toISOString()} ${new Date(clock.now()).toISOString()} ${s.phase} ${s.instanceId} ${event ?? ''}\n`),
    });
    expect(bid.outcome).toBe("succeeded");
    if (process.env.JOB_DEBUG) fs.writeFileSync("/tmp/jobs-steps.log", stepsLog(bidVolume));
    checkSteps(stepsLog(bidVolume), 180, 5);
    expect(bid.outbids).toBeGreaterThan(0);
    expect(bid.rentals.length).toBeGreaterThan(1);
    expect((await client.instances.list()).length).toBe(0);
    // At most one of its instances billed at any moment: each was charged from its creation to its end, one after another.
    const charged = (await client.billing.invoices()).invoices.filter((row) => bid.rentals.some((r) => r.instanceId === row.instance_id)).sort((a, b) => a.start - b.start);
    expect(charged.length).toBe(bid.rentals.length);
    for (let i = 1; i < charged.length; i++) expect(charged[i].start).toBeGreaterThanOrEqual(charged[i - 1].end);

    const onDemandVolume = await volume();
    const onDemand = await runJob(jobClient, spec(onDemandVolume), { sshPrivateKey: key.privateKey, clock });
    expect(onDemand.outcome).toBe("succeeded");
    expect(bid.spend).toBeLessThanOrEqual(0.6 * onDemand.spend);
    expect(bid.onDemandEstimate).toBeGreaterThan(bid.spend);
    await http(emu.url, "PUT", "/_emulator/settings", { body: { outbids: { perHour: 0 } } });
  }, 300_000);

  it("outbid under its ceiling: the bid is raised and the command starts again on the same instance, from its checkpoint", async () => {
    const base = await emulatedTime(emu.url, { stepMs: 120_000 });
    const volumeId = await volume();
    let outbidDone = false;
    // Twenty minutes in, another tenant outbids it with a bid above its own: the machine's minimum is that bid.
    const clock = {
      now: base.now,
      sleep: async (ms: number) => {
        await base.sleep(ms);
        const [running] = emu.marketplace.instances.all();
        if (outbidDone || !running || base.now() - running.createdAt < 20 * 60_000) return;
        outbidDone = true;
        const raised = Number((running.pricePerHour * 1.2).toFixed(4));
        emu.marketplace.market.setMinBid(running.offer.id, raised);
        running.offer = { ...running.offer, min_bid: raised };
        await http(emu.url, "POST", `/_emulator/instances/${running.id}/outbid`);
      },
    };
    const report = await runJob(emu.client({ clock }), spec(volumeId, { env: { STEPS: "30", STEP_SECONDS: "120", CHECKPOINT_EVERY: "5" }, interruptible: { maxBidPerHour: 1 } }), { sshPrivateKey: key.privateKey, clock });
    expect(report).toMatchObject({ outcome: "succeeded", outbids: 1, restarts: 1, rentals: [{ end: "succeeded" }] });
    expect(report.events.map((e) => e.what).join("\n")).toMatch(/outbid on instance \d+: bid raised to [\d.]+ \$\/hour/);
    checkSteps(stepsLog(volumeId), 30, 5);
    expect((await client.instances.list()).length).toBe(0);
  }, 120_000);
});

/** Every step 1..total done; each resume from the last checkpoint before it, losing fewer than `every` steps. */
function checkSteps(log: string, total: number, every: number): void {
  const done = new Set<number>();
  let last = 0;
  const resumed: number[] = [];
  const lastCheckpoints: number[] = [];
  for (const line of log.trim().split("\n")) {
    const [word, n] = line.split(" ");
    if (word === "resume") {
      resumed.push(Number(n));
      lastCheckpoints.push(Math.floor(last / every) * every);
    } else {
      last = Number(n);
      done.add(last);
    }
  }
  expect(resumed).toEqual(lastCheckpoints);
  expect(last).toBe(total);
  expect(done.size).toBe(total);
  expect(resumed.length).toBeGreaterThan(0);
}
