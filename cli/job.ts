import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse as parseYaml } from "yaml";
import { cancelJob, Clock, ConfigurationError, Connection, GpuRentalClient, JobReport, JobSpecInput, JobState, JobStore, parseJobSpec, REAL_TIME, reportOf, runJob } from "../sdk";
import { emulatedTime } from "./emulated-time";

/**
 * `gpu-rental job run|status|cancel FILE.yaml` (docs/jobs.md): a job file, the watcher's state kept beside it (or
 * where `--state` says) so that the next watcher (a CI step after one that died) takes the job over, and the report.
 */
export interface JobCommandOptions {
  json?: boolean;
  /** Where the watcher's state is kept. Default `.gpu-rental/job-<name>.json` beside the job file. */
  state?: string;
  /** Rehearse on the emulator: pauses move its clock (./emulated-time.ts). */
  emulatedTime?: boolean;
}

interface JobFile {
  input: JobSpecInput;
  /** The SSH key's private half (`sshKey`, default ~/.ssh/id_ed25519). */
  privateKey: string;
  statePath: string;
}

/**
 * Reads a job file: YAML, `${NAME}` replaced by the environment's NAME anywhere in a value (a volume id a CI step
 * made; `${NAME:-default}` with a default), `commandFile` (a script beside the job file) as the command, `sshKey` the private key file.
 */
export function readJobFile(file: string, statePath?: string): JobFile {
  const text = fs.readFileSync(file, "utf8").replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => {
    const value = process.env[name] ?? fallback;
    if (value === undefined) throw new ConfigurationError(`${file} uses \${${name}}, which is not set in the environment.`);
    return value;
  });
  const raw = (parseYaml(text) ?? {}) as Record<string, unknown>;
  const { commandFile, sshKey, ...input } = raw;
  if (typeof commandFile === "string") input.command = fs.readFileSync(path.resolve(path.dirname(file), commandFile), "utf8");
  const keyFile = typeof sshKey === "string" ? sshKey.replace(/^~(?=\/)/, os.homedir()) : path.join(os.homedir(), ".ssh", "id_ed25519");
  if (!fs.existsSync(keyFile)) throw new ConfigurationError(`The job's SSH key ${keyFile} does not exist: give sshKey, the private key whose public half is on the account.`);
  const spec = parseJobSpec(input);
  return { input: input as JobSpecInput, privateKey: fs.readFileSync(keyFile, "utf8"), statePath: statePath ?? path.join(path.dirname(path.resolve(file)), ".gpu-rental", `job-${spec.name}.json`) };
}

/** The state in a file (owner-only), replaced whole at each save: a watcher killed mid-write leaves the last one. */
export function fileStore(file: string): JobStore {
  return {
    load: () => (fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as JobState) : undefined),
    save: (state) => {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      fs.writeFileSync(`${file}.new`, JSON.stringify(state, null, 1), { mode: 0o600 });
      fs.renameSync(`${file}.new`, file);
    },
  };
}

async function clockFor(account: Connection, options: JobCommandOptions): Promise<Clock> {
  return options.emulatedTime ? emulatedTime(account.apiUrl, { controlToken: process.env.GPU_RENTAL_CONTROL_TOKEN }) : REAL_TIME;
}

/** `job run`: runs (or takes over) the job to its end; exit code 1 unless it succeeded. */
export async function runJobCommand(file: string, options: JobCommandOptions, account: Connection): Promise<JobReport> {
  const job = readJobFile(file, options.state);
  const clock = await clockFor(account, options);
  const client = new GpuRentalClient({ ...account, clock });
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  let shown = "";
  try {
    const report = await runJob(client, job.input, {
      sshPrivateKey: job.privateKey,
      store: fileStore(job.statePath),
      clock,
      signal: stop.signal,
      onProgress: (state, event) => {
        // A line for each event, each change of state, and each hour of the job.
        const mark = `${state.phase} ${Math.floor((clock.now() - state.startedAt) / 3_600_000)}`;
        if (!event && mark === shown) return;
        shown = mark;
        const line = `${elapsed(clock.now() - state.startedAt)} ${state.phase}${state.instanceId ? ` on instance ${state.instanceId}` : ""}, ` +
          `${state.restarts} restart(s), ${state.outbids} outbid(s), spent ${state.spend.toFixed(4)} $${event ? `: ${event}` : ""}`;
        (options.json ? process.stderr : process.stdout).write(`${line}\n`);
      },
    });
    show(report, options.json);
    if (report.outcome !== "succeeded") process.exitCode = 1;
    return report;
  } finally {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
  }
}

/** `job status`: the job as its kept state says, and whether its instance is there. */
export async function jobStatusCommand(file: string, options: JobCommandOptions, account: Connection): Promise<JobReport> {
  const job = readJobFile(file, options.state);
  const state = fileStore(job.statePath).load();
  if (!state) throw new ConfigurationError(`No job was started from ${file} (no state at ${job.statePath}).`);
  const clock = await clockFor(account, options);
  const report = reportOf(state, clock.now());
  if (state.instanceId !== undefined) {
    const instance = await new GpuRentalClient(account).instances.get(state.instanceId);
    if (!options.json) console.log(`instance ${state.instanceId}: ${instance ? `${instance.actual_status ?? "provisioning"} (${instance.cur_state})` : "gone"}`);
  }
  show(report, options.json);
  return report;
}

/** `job cancel`: destroys the job's instance, marks it cancelled. */
export async function jobCancelCommand(file: string, options: JobCommandOptions, account: Connection): Promise<JobReport> {
  const job = readJobFile(file, options.state);
  const clock = await clockFor(account, options);
  const report = await cancelJob(new GpuRentalClient({ ...account, clock }), fileStore(job.statePath), clock);
  show(report, options.json);
  return report;
}

function show(report: JobReport, json?: boolean): void {
  if (json) {
    console.log(JSON.stringify(report, null, 2));
    return;
  }
  console.log(`job ${report.name} (${report.id}): ${report.outcome}${report.error ? `: ${report.error}` : ""}`);
  console.log(`  ${report.rentals.length} rental(s), ${report.outbids} outbid(s), ${report.restarts} restart(s), ${report.hours.toFixed(2)} h (${report.runningHours.toFixed(2)} h running)`);
  const onDemand = report.onDemandEstimate === undefined ? "" : `; on demand it would have cost about ${report.onDemandEstimate.toFixed(4)} $`;
  console.log(`  spent ${report.spend.toFixed(4)} $${onDemand}`);
  if (report.perHour.length) console.log(`  $ each hour: ${report.perHour.map((n) => n.toFixed(4)).join(" ")}`);
}

/** `2h05m` of the job. */
function elapsed(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  return `[${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m]`;
}
