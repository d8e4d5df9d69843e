/**
 * What a job's watcher keeps (./job.ts): enough for another watcher, started after this one died, to take the job
 * over without renting twice, and for the report of the job's life. Saved after every step through a JobStore (the
 * CLI keeps it in a file; a CI runner keeps that file between its steps).
 */
export interface JobState {
  version: 1;
  /** The job's own id: its instances' label carries it. */
  id: string;
  name: string;
  /** The spec it was started with (./job-spec.ts jobSpecDigest). */
  spec: string;
  phase: "starting" | "running" | "succeeded" | "failed" | "cancelled";
  /** Clock ms. */
  startedAt: number;
  endedAt?: number;
  /** The instance the job runs on now, if any. */
  instanceId?: number;
  /** Its bid, $/hour (interruptible). */
  bid?: number;
  rentals: RentalLife[];
  outbids: number;
  restarts: number;
  /** Failures of the command: `exit <code>: <last line>`, oldest first. */
  failures: string[];
  /** What the job cost so far, $ (the service's charges of its instances), as last read. */
  spend: number;
  /** Cumulative spend at the end of each hour of the job (index 0: after its first hour). */
  hourly: number[];
  /** Hours the command ran (its instances running), summed over rentals. */
  runningHours: number;
  /** The cheapest on-demand rate of the job's criteria when it started, $/hour: what on-demand would have cost. */
  onDemandPerHour?: number;
  error?: string;
  events: JobEvent[];
}

export interface RentalLife {
  instanceId: number;
  offerId: number;
  machineId?: number;
  /** The bid when rented (interruptible), or undefined on demand. */
  bid?: number;
  /** Clock ms. */
  from: number;
  to?: number;
  /** Why it ended. */
  end?: "outbid" | "succeeded" | "failed" | "cancelled" | "deadline" | "spend cap" | "gone";
}

export interface JobEvent {
  /** Clock ms. */
  at: number;
  what: string;
}

/** Where a job's state is kept. */
export interface JobStore {
  load(): JobState | undefined;
  save(state: JobState): void;
}

/** A store in memory: a job that no other watcher takes over. */
export function memoryStore(): JobStore & { state?: JobState } {
  const store: JobStore & { state?: JobState } = {
    load: () => (store.state ? structuredClone(store.state) : undefined),
    save: (state) => void (store.state = structuredClone(state)),
  };
  return store;
}

/** The job's life, as `runJob` answers it and `gpu-rental job run --json` prints it. */
export interface JobReport {
  id: string;
  name: string;
  outcome: "succeeded" | "failed" | "cancelled" | "running";
  error?: string;
  rentals: RentalLife[];
  outbids: number;
  restarts: number;
  failures: string[];
  /** $ spent, the service's charges of the job's instances. */
  spend: number;
  /** $ each hour of the job cost. */
  perHour: number[];
  /** Hours from start to end (or now). */
  hours: number;
  runningHours: number;
  /** What the hours the command ran would have cost on demand, at the cheapest on-demand rate of its criteria when it started. */
  onDemandEstimate?: number;
  events: JobEvent[];
}

export function reportOf(state: JobState, now: number): JobReport {
  const outcome = state.phase === "starting" || state.phase === "running" ? "running" : state.phase;
  const perHour = state.hourly.map((total, i) => round(total - (i ? state.hourly[i - 1] : 0)));
  const hours = ((state.endedAt ?? now) - state.startedAt) / 3_600_000;
  return {
    id: state.id,
    name: state.name,
    outcome,
    ...(state.error && { error: state.error }),
    rentals: state.rentals,
    outbids: state.outbids,
    restarts: state.restarts,
    failures: state.failures,
    spend: round(state.spend),
    perHour: [...perHour, ...(hours > state.hourly.length ? [round(state.spend - (state.hourly.at(-1) ?? 0))] : [])],
    hours: round(hours),
    runningHours: round(state.runningHours),
    ...(state.onDemandPerHour !== undefined && { onDemandEstimate: round(state.runningHours * state.onDemandPerHour) }),
    events: state.events,
  };
}

const round = (n: number) => Number(n.toFixed(6));
