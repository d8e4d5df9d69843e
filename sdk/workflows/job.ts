import { randomBytes } from "node:crypto";
import type { GpuRentalClient } from "../client";
import { Clock, REAL_TIME } from "../clock";
import { ConfigurationError, GpuRentalError } from "../errors";
import { CreateInstanceRequest, Instance } from "../schemas";
import { offerQuery } from "./criteria";
import { destroyRetried } from "./destroy";
import { exec } from "./exec";
import { pauseUnlessInterrupted, throwIfInterrupted } from "./interruption";
import { NoMatchingOfferError, rentInstance, RentFailedError } from "./rent";
import { checkJob, jobCriteria, JobSpec, JobSpecInput, parseJobSpec, jobSpecDigest } from "./job-spec";
import { JobReport, JobState, JobStore, memoryStore, RentalLife, reportOf } from "./job-state";
import { jobOnstart, JOB_STATUS, parseStatus, READ_STATUS } from "./job-wrapper";
import { durationSeconds } from "./watchdog";

export * from "./job-spec";
export * from "./job-state";
export { jobOnstart } from "./job-wrapper";

/**
 * Jobs that survive outbids (docs/jobs.md): a command run to completion on rented GPUs, interruptible or on demand.
 * The watcher rents (./rent.ts), and the command runs under a wrapper started from onstart (./job-wrapper.ts), so it
 * starts again at each boot and resumes from its checkpoints, which live on a network volume every instance of the
 * job mounts. On an outbid the watcher raises the bid up to the ceiling (the instance boots again where it was) or
 * destroys it and rents another machine; one instance at most is billed at any moment. A command that fails is
 * started again unless it failed the same way before. At the end nothing is left billing, and the report tells the
 * job's life and spend. The watcher's state is kept in a JobStore after each step: a watcher started after another
 * died takes the job over where it was, without renting twice.
 */
export interface JobOptions {
  /** The private key whose public half is registered on the account: the watcher reads the command's exit with it, over SSH. */
  sshPrivateKey: string | Buffer;
  /** Where the watcher's state is kept (default: in memory, for this watcher only). */
  store?: JobStore;
  /** The watcher's time (default real time); the client's too (`new GpuRentalClient({ clock })`), which times its rentals' claims on offers. */
  clock?: Clock;
  /** Aborted: the watcher stops watching (the job goes on: its wrapper ends its instance; another watcher may take it over). */
  signal?: AbortSignal;
  /** After each look at the job. */
  onProgress?: (state: JobState, event?: string) => void;
}

export class JobStateMismatchError extends ConfigurationError {
  override name = "JobStateMismatchError";
}

/** Runs a job to its end (or until the signal): its report. Bad input is refused before anything is rented. */
export async function runJob(client: GpuRentalClient, input: JobSpecInput, options: JobOptions): Promise<JobReport> {
  const spec = parseJobSpec(input);
  const clock = options.clock ?? REAL_TIME;
  const store = options.store ?? memoryStore();
  let state = store.load();
  if (state && state.spec !== jobSpecDigest(spec)) {
    throw new JobStateMismatchError(`The kept state is of job ${state.name} (${state.id}) with another spec: finish or cancel that job (gpu-rental job cancel) before running this one.`);
  }
  if (state && !["starting", "running"].includes(state.phase)) return reportOf(state, clock.now());
  if (!state) {
    await checkJob(client, spec, options.sshPrivateKey);
    state = await newState(client, spec, clock.now());
  } else {
    state.events.push({ at: clock.now(), what: "taken over by a new watcher" });
  }
  store.save(state);
  return new Watcher(client, spec, state, store, clock, options).run();
}

/** Stops a job's instance and marks it cancelled (its watcher, if any, finds it so and stops). */
export async function cancelJob(client: GpuRentalClient, store: JobStore, clock: Clock = REAL_TIME): Promise<JobReport> {
  const state = store.load();
  if (!state) throw new ConfigurationError("No job is kept there: nothing to cancel.");
  if (["starting", "running"].includes(state.phase)) {
    const ids = new Set([...(state.instanceId ? [state.instanceId] : []), ...(await labelled(client, state)).map((i) => i.id)]);
    await destroyRetried(client, [...ids]);
    closeRental(state, clock.now(), "cancelled");
    Object.assign(state, { phase: "cancelled", endedAt: clock.now(), instanceId: undefined, error: "cancelled" });
    state.events.push({ at: clock.now(), what: `cancelled: instance(s) ${[...ids].join(", ") || "none"} destroyed` });
    state.spend = await spendOf(client, state);
    store.save(state);
  }
  return reportOf(state, clock.now());
}

async function newState(client: GpuRentalClient, spec: JobSpec, now: number): Promise<JobState> {
  const [onDemand] = await client.offers.search({ ...offerQuery({ ...jobCriteria(spec), type: "on-demand", maxPricePerHour: undefined }), limit: 1 });
  return {
    version: 1, id: `${spec.name}-${randomBytes(4).toString("hex")}`, name: spec.name, spec: jobSpecDigest(spec), phase: "starting",
    startedAt: now, rentals: [], outbids: 0, restarts: 0, failures: [], spend: 0, hourly: [], runningHours: 0,
    ...(onDemand && { onDemandPerHour: onDemand.dph_total }),
    events: [{ at: now, what: `started: ${spec.interruptible ? `interruptible, bids up to ${spec.interruptible.maxBidPerHour} $/hour` : "on demand"}` }],
  };
}

const HOUR_MS = 3_600_000;
/** How much above the minimum the job bids: a little headroom makes the next outbid a little less likely. */
const BID_HEADROOM = 1.02;

class Watcher {
  private readonly pollMs: number;
  private readonly statusMs: number;
  private lastStatusAt?: number;
  private lastLook?: { at: number; running: boolean };

  constructor(
    private readonly client: GpuRentalClient,
    private readonly spec: JobSpec,
    private readonly state: JobState,
    private readonly store: JobStore,
    private readonly clock: Clock,
    private readonly options: JobOptions,
  ) {
    this.pollMs = durationSeconds(spec.pollInterval) * 1000;
    this.statusMs = Math.max(this.pollMs, durationSeconds(spec.statusInterval) * 1000);
  }

  async run(): Promise<JobReport> {
    while (this.active()) {
      throwIfInterrupted(this.options.signal, "the watcher stopped; the job goes on (`gpu-rental job status` follows it)");
      const event = await this.step();
      if (event) this.state.events.push({ at: this.clock.now(), what: event });
      this.store.save(this.state);
      this.options.onProgress?.(this.state, event);
      if (this.active()) await pauseUnlessInterrupted(this.pollMs, this.options.signal, "the watcher stopped; the job goes on", this.clock);
    }
    return reportOf(this.state, this.clock.now());
  }

  private active(): boolean {
    return this.state.phase === "starting" || this.state.phase === "running";
  }

  /** One look at the job; what happened, if anything. */
  private async step(): Promise<string | undefined> {
    await this.readSpend();
    const limit = this.overLimit();
    if (limit) return this.end("failed", limit.why, limit.end);
    if (this.state.instanceId === undefined) return this.rent();
    const instance = await this.client.instances.get(this.state.instanceId);
    this.countRunning(instance);
    if (!instance) return this.finished();
    if (/outbid/i.test(instance.status_msg ?? "") && instance.cur_state === "stopped") return this.outbid(instance);
    if (instance.cur_state === "stopped" || instance.intended_status === "stopped") {
      return this.failed("the command failed and its instance stopped itself before the watcher read why (see .gpu-rental-job.log on the checkpoint volume)", instance);
    }
    if (instance.actual_status !== "running") return undefined;
    this.state.phase = "running";
    if (this.clock.now() - (this.lastStatusAt ?? -Infinity) < this.statusMs) return undefined;
    this.lastStatusAt = this.clock.now();
    const status = await this.readStatus(instance);
    if (status?.state !== "exited" || status.code === 0) return undefined;
    const last = status.tail.split("\n").filter((line) => line.trim()).at(-1) ?? "";
    return this.failed(`exit ${status.code}${last ? `: ${last.trim()}` : ""}`, instance);
  }

  /** The deadline or the spend cap passed. */
  private overLimit(): { why: string; end: RentalLife["end"] } | undefined {
    const { deadline, maxSpend } = this.spec;
    if (deadline !== undefined && this.clock.now() - this.state.startedAt >= durationSeconds(deadline) * 1000) return { why: `the deadline (${deadline}) passed`, end: "deadline" };
    if (maxSpend !== undefined && this.state.spend >= maxSpend) return { why: `the spend cap (${maxSpend} $) was reached (${round(this.state.spend)} $ spent)`, end: "spend cap" };
    if (this.state.restarts > this.spec.maxRestarts) return { why: `the command was started again ${this.state.restarts} times (maxRestarts ${this.spec.maxRestarts})`, end: "failed" };
    return undefined;
  }

  /** Rents the job's next instance (adopting one a watcher that died had rented), with the checkpoint volume mounted. */
  private async rent(): Promise<string | undefined> {
    const orphans = await labelled(this.client, this.state);
    if (orphans.length) {
      const [kept, ...extra] = orphans.sort((a, b) => b.id - a.id);
      if (extra.length) await destroyRetried(this.client, extra.map((i) => i.id));
      this.adopt(kept.id, kept.machine_id ?? undefined, (kept as { dph_base?: number }).dph_base, undefined);
      return `took over instance ${kept.id}, rented by a watcher that stopped before keeping it`;
    }
    const criteria = jobCriteria(this.spec);
    const [offer] = await this.client.offers.search({ ...offerQuery(criteria), limit: 1 });
    if (!offer) return this.spec.interruptible ? `no offer under the bid ceiling now; looking again` : "no offer matches now; looking again";
    const ceiling = this.spec.interruptible?.maxBidPerHour;
    const bid = ceiling === undefined ? undefined : round4(Math.min(ceiling, (offer.min_bid ?? offer.dph_total) * BID_HEADROOM));
    try {
      const rented = await rentInstance(this.client, { offerId: offer.id, type: criteria.type }, this.request(bid), { clock: this.clock, signal: this.options.signal, deadlineMs: this.pollMs * 5 });
      this.adopt(rented.instanceId, offer.machine_id ?? undefined, bid, offer.id);
      return `rented instance ${rented.instanceId} (offer ${offer.id}${bid === undefined ? ", on demand" : `, bid ${bid} $/hour`})`;
    } catch (error) {
      if (error instanceof NoMatchingOfferError || error instanceof RentFailedError) return `offer ${offer.id} was taken meanwhile (${error.message}); looking again`;
      throw error;
    }
  }

  private adopt(instanceId: number, machineId: number | undefined, bid: number | undefined, offerId: number | undefined): void {
    if (this.state.rentals.length) this.state.restarts++;
    this.state.instanceId = instanceId;
    this.state.bid = bid;
    this.state.rentals.push({ instanceId, offerId: offerId ?? -1, ...(machineId !== undefined && { machineId }), ...(bid !== undefined && { bid }), from: this.clock.now() });
  }

  private request(bid: number | undefined): CreateInstanceRequest {
    const { volumeId, mountPath } = this.spec.checkpoints;
    return {
      image: this.spec.image,
      runtype: "ssh_direct",
      disk: this.spec.disk,
      label: labelOf(this.state),
      onstart: jobOnstart(this.spec, this.client.apiUrl, Math.round((this.statusMs * 3) / 1000)),
      env: { [`-v V.${volumeId}:${mountPath}`]: "1" },
      ...(bid !== undefined && { price: bid }),
    };
  }

  /**
   * Outbid: a bid up to the ceiling runs it again where it was; above it, another machine
   * (docs/service-facts.md#an-outbid-instance-is-stopped-and-starts-again).
   */
  private async outbid(instance: Instance): Promise<string> {
    this.state.outbids++;
    const ceiling = this.spec.interruptible?.maxBidPerHour ?? 0;
    const minimum = (instance as { min_bid?: number | null }).min_bid ?? Infinity;
    const bid = round4(Math.min(ceiling, minimum * BID_HEADROOM));
    if (minimum <= ceiling) {
      this.state.restarts++;
      // Its bid may beat the minimum already (the winner left): then a start is enough.
      if (bid <= (this.state.bid ?? 0)) {
        await this.client.instances.start(instance.id);
        return `outbid on instance ${instance.id}: its bid (${this.state.bid} $/hour) beats the minimum (${minimum}) again; started again where it was`;
      }
      await this.client.instances.changeBid(instance.id, bid);
      this.state.bid = bid;
      return `outbid on instance ${instance.id}: bid raised to ${bid} $/hour (the new minimum is ${minimum}); it starts again where it was`;
    }
    await this.release("outbid");
    const moved = `outbid on instance ${instance.id}: the new minimum (${minimum} $/hour) is over the ceiling (${ceiling}); renting another machine`;
    return `${moved}; ${await this.rent()}`;
  }

  /** The command failed: started again, unless it failed the same way the time before. */
  private async failed(signature: string, instance: Instance): Promise<string> {
    const same = this.state.failures.at(-1) === signature;
    this.state.failures.push(signature);
    if (same) return this.end("failed", `the command failed the same way twice: ${signature}`, "failed");
    this.state.restarts++;
    if (instance.cur_state === "stopped") {
      await this.client.instances.start(instance.id);
    } else {
      // Its old exit must not be read again as the new run's.
      await exec(instance, `rm -f "${JOB_STATUS}"`, this.sshOptions());
      await this.client.instances.reboot(instance.id);
    }
    return `the command failed (${signature}); started again from its last checkpoint`;
  }

  private finished(): string {
    const id = this.state.instanceId;
    closeRental(this.state, this.clock.now(), "succeeded");
    Object.assign(this.state, { phase: "succeeded", endedAt: this.clock.now(), instanceId: undefined });
    return `the command finished: its wrapper destroyed instance ${id}`;
  }

  /** Ends the job: its instance destroyed, nothing left billing. */
  private async end(phase: "failed" | "cancelled", why: string, rentalEnd: RentalLife["end"]): Promise<string> {
    await this.release(rentalEnd);
    Object.assign(this.state, { phase, endedAt: this.clock.now(), error: why });
    await this.readSpend();
    return `${phase}: ${why}`;
  }

  private async release(end: RentalLife["end"]): Promise<void> {
    if (this.state.instanceId !== undefined) await destroyRetried(this.client, [this.state.instanceId], { signal: this.options.signal });
    closeRental(this.state, this.clock.now(), end);
    this.state.instanceId = undefined;
  }

  private async readStatus(instance: Instance) {
    try {
      const result = await exec(instance, READ_STATUS, this.sshOptions());
      return parseStatus(result.stdout);
    } catch (error) {
      // Not reachable this time (a boot in progress): the next look tries again.
      if (error instanceof GpuRentalError) return undefined;
      throw error;
    }
  }

  private sshOptions() {
    return { privateKey: this.options.sshPrivateKey, timeoutMs: 30_000, connectTimeoutMs: 15_000 };
  }

  private async readSpend(): Promise<void> {
    this.state.spend = await spendOf(this.client, this.state);
    const hours = Math.floor((this.clock.now() - this.state.startedAt) / HOUR_MS);
    while (this.state.hourly.length < hours) this.state.hourly.push(this.state.spend);
  }

  /** Hours the command ran, from one look to the next while its instance runs. */
  private countRunning(instance: Instance | null): void {
    const now = this.clock.now();
    const running = instance?.actual_status === "running" && instance.cur_state !== "stopped";
    if (running && this.lastLook?.running) this.state.runningHours += (now - this.lastLook.at) / HOUR_MS;
    this.lastLook = { at: now, running };
  }
}

/** The label of a job's instances: the job's id, so a watcher finds what another rented. */
export function labelOf(state: Pick<JobState, "id">): string {
  return `gpu-rental-job ${state.id}`;
}

/** The job's instances as the service lists them by their label. */
async function labelled(client: GpuRentalClient, state: JobState): Promise<Instance[]> {
  return client.instances.list({ filters: { label: { eq: labelOf(state) } } });
}

/** What the job's instances cost so far, $: the service's charges. */
async function spendOf(client: GpuRentalClient, state: JobState): Promise<number> {
  const ids = new Set(state.rentals.map((r) => r.instanceId));
  const { invoices } = await client.billing.invoices();
  return invoices.filter((row) => row.type === "charge" && row.instance_id !== undefined && ids.has(row.instance_id)).reduce((sum, row) => sum + row.amount, 0);
}

function closeRental(state: JobState, now: number, end: RentalLife["end"]): void {
  const open = state.rentals.at(-1);
  if (open && open.to === undefined) Object.assign(open, { to: now, end });
}

const round4 = (n: number) => Number(n.toFixed(4));
const round = (n: number) => Number(n.toFixed(4));
