import type { WorkerState } from "../../sdk/schemas";
import type { EndpointRecord, InstanceRecord, WorkerGroupRecord, WorkerRecord } from "./records";
import { HOLD_MS, Router, WORKER_PERF } from "./routing";
import { DEFAULT_INACTIVITY_S, Serverless } from "./serverless";

/**
 * The autoscaler (emulator/SERVERLESS.md), on the emulator's clock: each tick it compares what an endpoint's load
 * and targets ask for with the workers it has, and rents, starts, stops and destroys workers through the market
 * like any client. A worker is an instance; its state follows from the instance's and from its model server.
 */

export interface AutoscalerDeps {
  now(): number;
  serverless: Serverless;
  router: Router;
  instance(id: number): InstanceRecord | undefined;
  /** The instance's status as the API shows it (`loading`, `running`, ...). */
  status(instance: InstanceRecord): string | null;
  /** Rents a worker for the group on the market: its instance id, or why none (no offer, the template gone). */
  rent(group: WorkerGroupRecord, endpoint: EndpointRecord): number | string;
  start(instance: InstanceRecord): void;
  stop(instance: InstanceRecord): void;
  destroy(instance: InstanceRecord): void;
  log(endpoint: EndpointRecord, group: WorkerGroupRecord | undefined, line: string): void;
  /**
   * Whether a worker's model server is probed (its port answers) before it is ready: one that runs on an emulated
   * machine and publishes its port. Others (no machines, runtype `args`) are ready once their instance runs.
   */
  probes(instance: InstanceRecord): boolean;
}

/** A worker's state, from its instance's and its model server's. */
export function workerState(deps: Pick<AutoscalerDeps, "instance" | "status" | "probes">, worker: WorkerRecord, group?: WorkerGroupRecord): WorkerState {
  const instance = deps.instance(worker.instanceId);
  if (!instance) return "destroying";
  if (worker.error || instance.failure) return "error";
  if (instance.intended === "stopped") return "inactive";
  const status = deps.status(instance);
  if (status !== "running") return status === "loading" ? "loading" : "creating";
  if (deps.probes(instance) && worker.loadedAt === undefined) return "loading";
  if (group && worker.version < group.version) return "updating";
  return "ready";
}

export class Autoscaler {
  private readonly deps: AutoscalerDeps;
  /** Whether the current look changed anything (a worker rented, started, stopped, retired or destroyed). */
  private acted = false;

  constructor(deps: AutoscalerDeps) {
    const acting = <A extends unknown[], R>(act: (...args: A) => R) => (...args: A): R => {
      this.acted = true;
      return act(...args);
    };
    const rent = (group: WorkerGroupRecord, endpoint: EndpointRecord) => {
      const rented = deps.rent(group, endpoint);
      if (typeof rented === "number") this.acted = true;
      return rented;
    };
    // A started or stopped worker's model loads anew: it is ready again once its server answers.
    const anew = (act: (instance: InstanceRecord) => void) => (instance: InstanceRecord) => {
      const worker = deps.serverless.worker(instance.id);
      if (worker) delete worker.loadedAt;
      act(instance);
    };
    this.deps = { ...deps, rent, start: acting(anew(deps.start)), stop: acting(anew(deps.stop)), destroy: acting(deps.destroy) };
  }

  /** One look at every endpoint; answers whether it changed anything (what a data dir then saves). */
  tick(): boolean {
    this.acted = false;
    for (const endpoint of this.deps.serverless.allEndpoints()) this.scale(endpoint);
    return this.acted;
  }

  /** Marks a worker loaded (its model server answered, or it said so): it takes requests from now on. */
  loaded(instanceId: number): void {
    const worker = this.deps.serverless.worker(instanceId);
    if (worker && worker.loadedAt === undefined) {
      worker.loadedAt = this.deps.now();
      const endpoint = this.deps.serverless.allEndpoints().find((e) => e.id === worker.endpointId);
      if (endpoint) this.deps.log(endpoint, undefined, `worker ${instanceId} is ready`);
    }
  }

  private scale(endpoint: EndpointRecord): void {
    const groups = this.deps.serverless.groupsOf(endpoint.id);
    this.clearGone(endpoint);
    if (endpoint.state === "suspended") return;
    if (endpoint.state === "stopped") return this.stopAll(endpoint);
    for (const group of groups) this.roll(endpoint, group);
    if (!groups.length) return;
    const workers = this.live(endpoint);
    const active = workers.filter((w) => this.stateOf(w) !== "inactive");
    const { activeTarget, totalTarget } = this.targets(endpoint, groups, active.length);
    if (active.length < activeTarget) return this.grow(endpoint, groups, workers, activeTarget - active.length);
    // Cold workers: rented to load the model, then stopped (below) while the load does not need them.
    if (workers.length < totalTarget) return this.rentUpTo(endpoint, groups, workers, totalTarget - workers.length);
    // While a rolling update runs, its surge worker is not an excess to stop.
    if (workers.some((w) => w.replaces !== undefined)) return;
    this.shrink(endpoint, workers, activeTarget, this.idle(endpoint) ? totalTarget : workers.length);
  }

  /** How many workers should be active (serving) and how many in all (with the cold ones). */
  private targets(endpoint: EndpointRecord, groups: WorkerGroupRecord[], activeNow: number): { activeTarget: number; totalTarget: number } {
    const load = this.load(endpoint);
    let activeTarget = Math.ceil(Math.max(endpoint.minLoad, load) / (WORKER_PERF * endpoint.targetUtil));
    // Before the inactivity timeout, an endpoint that has workers keeps one serving.
    if (!this.idle(endpoint) && activeNow > 0) activeTarget = Math.max(activeTarget, 1);
    // The groups' own cold workers where any declares them (0 included), else the endpoint's.
    const declared = groups.filter((g) => g.coldWorkers !== null);
    const cold = declared.length ? declared.reduce((sum, g) => sum + g.coldWorkers!, 0) : endpoint.coldWorkers;
    const coldLoad = Math.ceil(Math.max(endpoint.minColdLoad, load * endpoint.coldMult) / WORKER_PERF);
    const cap = (n: number) => Math.min(n, endpoint.maxWorkers);
    return { activeTarget: cap(activeTarget), totalTarget: cap(Math.max(activeTarget, cold, coldLoad)) };
  }

  /** The endpoint's load: its requests routed and waiting, and what its workers report beyond them. */
  private load(endpoint: EndpointRecord): number {
    const reported = this.live(endpoint).reduce((sum, w) => sum + (w.reportedLoad ?? 0), 0);
    return this.deps.router.endpointLoad(endpoint) + reported;
  }

  /** Whether no request came for the inactivity timeout (a negative timeout: never). */
  private idle(endpoint: EndpointRecord): boolean {
    const timeout = endpoint.inactivityTimeout ?? DEFAULT_INACTIVITY_S;
    if (timeout < 0) return false;
    return this.deps.now() - endpoint.lastRequestAt >= Math.max(timeout * 1000, HOLD_MS) || (timeout === 0 && this.load(endpoint) === 0);
  }

  /** More workers serving: inactive ones started first (their model is loaded), then new ones rented, up to the cap. */
  private grow(endpoint: EndpointRecord, groups: WorkerGroupRecord[], workers: WorkerRecord[], needed: number): void {
    for (const worker of workers.filter((w) => this.stateOf(w) === "inactive" && !w.retiring).slice(0, needed)) {
      this.deps.start(this.deps.instance(worker.instanceId)!);
      this.deps.log(endpoint, undefined, `worker ${worker.instanceId} started (inactive to active)`);
      needed--;
    }
    this.rentUpTo(endpoint, groups, workers, needed);
  }

  /** Rents up to `needed` new workers, within the cap, each for the group with the fewest. */
  private rentUpTo(endpoint: EndpointRecord, groups: WorkerGroupRecord[], workers: WorkerRecord[], needed: number): void {
    let room = endpoint.maxWorkers - workers.length;
    while (needed > 0 && room > 0) {
      const group = [...groups].sort((a, b) => this.deps.serverless.workersOf({ groupId: a.id }).length - this.deps.serverless.workersOf({ groupId: b.id }).length)[0];
      if (!this.rentFor(endpoint, group)) return;
      needed--;
      room--;
    }
  }

  /**
   * Fewer workers: the most expensive loaded ones beyond the active target stop (inactive, the model kept), and those
   * beyond the total go (the caller lets them go only after the inactivity timeout).
   */
  private shrink(endpoint: EndpointRecord, workers: WorkerRecord[], activeTarget: number, totalTarget: number): void {
    const byCost = (w: WorkerRecord) => this.deps.instance(w.instanceId)?.pricePerHour ?? 0;
    const ranked = [...workers].sort((a, b) => byCost(b) - byCost(a));
    let total = ranked.length;
    let active = ranked.filter((w) => this.stateOf(w) !== "inactive").length;
    for (const worker of ranked) {
      if (this.deps.router.working(worker.instanceId)) continue;
      const inactive = this.stateOf(worker) === "inactive";
      if (total > totalTarget) {
        this.retire(endpoint, worker, "scaled down");
        total--;
        if (!inactive) active--;
      } else if (this.stateOf(worker) === "ready" && active > activeTarget) {
        this.deps.stop(this.deps.instance(worker.instanceId)!);
        this.deps.log(endpoint, undefined, `worker ${worker.instanceId} stopped (inactive, model kept)`);
        active--;
      }
    }
  }

  /**
   * A rolling update, one worker at a time: an inactive worker of an older version goes at once; an active one gets
   * a replacement of the new version (one beyond the cap while the update lasts), stops taking requests once that
   * replacement is ready, and goes when it has none in flight.
   */
  private roll(endpoint: EndpointRecord, group: WorkerGroupRecord): void {
    const workers = this.deps.serverless.workersOf({ groupId: group.id }).filter((w) => !w.retiring);
    // A replacement that is loaded frees its old worker, even if the group moved on again meanwhile (it rolls in turn).
    for (const worker of workers.filter((w) => w.replaces !== undefined && ["ready", "updating"].includes(this.stateOf(w, group)))) {
      const old = this.deps.serverless.worker(worker.replaces!);
      if (old && !old.retiring) this.retire(endpoint, old, `replaced by worker ${worker.instanceId} of the new version`);
      delete worker.replaces;
    }
    const outdated = workers.filter((w) => w.version < group.version && !w.retiring);
    for (const worker of outdated.filter((w) => this.stateOf(w) === "inactive")) this.retire(endpoint, worker, "updated (inactive)");
    const replacing = workers.some((w) => w.replaces !== undefined);
    const next = outdated.find((w) => this.stateOf(w) !== "inactive" && !w.retiring);
    if (next && !replacing) this.rentFor(endpoint, group, next.instanceId);
  }

  private rentFor(endpoint: EndpointRecord, group: WorkerGroupRecord, replaces?: number): boolean {
    const rented = this.deps.rent(group, endpoint);
    if (typeof rented === "string") {
      this.deps.log(endpoint, group, `no worker rented: ${rented}`);
      return false;
    }
    const worker = this.deps.serverless.addWorker(group, rented);
    if (replaces !== undefined) worker.replaces = replaces;
    this.deps.log(endpoint, group, `worker ${rented} rented (creating)`);
    return true;
  }

  /** No new request goes to it; it is destroyed once nothing it was sent is in flight. */
  private retire(endpoint: EndpointRecord, worker: WorkerRecord, why: string): void {
    worker.retiring = true;
    this.acted = true;
    this.deps.log(endpoint, undefined, `worker ${worker.instanceId} retiring: ${why}`);
    this.clearGone(endpoint);
  }

  /** Workers whose instance is gone are forgotten; failed ones and idle retired ones are destroyed. */
  private clearGone(endpoint: EndpointRecord): void {
    for (const worker of this.deps.serverless.workersOf({ endpointId: endpoint.id })) {
      const instance = this.deps.instance(worker.instanceId);
      const failed = this.stateOf(worker) === "error";
      const finished = worker.retiring && !this.deps.router.working(worker.instanceId);
      if (instance && !failed && !finished) continue;
      if (instance) this.deps.destroy(instance);
      this.acted = true;
      if (failed) this.deps.log(endpoint, undefined, `worker ${worker.instanceId} failed (${worker.error ?? instance?.statusMsg ?? "its instance failed"}): destroyed, to be replaced`);
      this.deps.serverless.removeWorker(worker.instanceId);
      this.deps.router.forget({ workerId: worker.instanceId });
    }
  }

  /** A stopped endpoint: every worker inactive. */
  private stopAll(endpoint: EndpointRecord): void {
    for (const worker of this.live(endpoint)) {
      if (this.stateOf(worker) === "inactive") continue;
      this.deps.stop(this.deps.instance(worker.instanceId)!);
    }
  }

  private live(endpoint: EndpointRecord): WorkerRecord[] {
    return this.deps.serverless.workersOf({ endpointId: endpoint.id }).filter((w) => !w.retiring);
  }

  /** A worker's state (with its group: `updating` when a rolling update will replace it). */
  stateOf(worker: WorkerRecord, group?: WorkerGroupRecord): WorkerState {
    return workerState(this.deps, worker, group);
  }

}
