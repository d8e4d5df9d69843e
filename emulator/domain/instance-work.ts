import * as path from "node:path";
import { allowedCommand, logSelection } from "./commands";
import { cloudConnections } from "./cloud";
import { badRequest, notFound } from "./errors";
import type { MachineWork, Place } from "./machine-work";
import type { Results } from "./results";
import type { InstanceRecord, UserRecord } from "./records";

/** A copy (`copy_direct`) or a cloud copy (`rclone`), as the control API shows it. */
export interface TransferRecord {
  id: number;
  kind: "copy" | "sync";
  ownerId: number;
  /** The instance it copies into (what `cancel copy` / `cancel sync` name), or from (a copy into the cloud). */
  dstId?: number;
  srcId?: number;
  from: string;
  to: string;
  state: "running" | "done" | "failed" | "canceled";
  startedAt: number;
  endedAt?: number;
  message?: string;
}

export interface InstanceWorkDeps {
  now(): number;
  find(ownerId: number, id: number): InstanceRecord | undefined;
  /** The machines' side; undefined without machines. */
  work(): MachineWork | undefined;
  results: Results;
}

/** Lines of the emulator's own about an instance (its "daemon" log) kept per instance. */
const MAX_DAEMON_LINES = 1000;
const MAX_TRANSFERS = 500;

/**
 * The service's operations on an instance's machine (docs/service-facts.md#instance-logs-and-commands): its logs
 * and allowed commands, answered by URL; copies between machines and with a cloud connection's bucket, which run
 * until done or cancelled. Refusals come before anything starts: nothing is half-done. Not saved (a restarted
 * emulator has no copy running).
 */
export class InstanceWork {
  private readonly transfers: TransferRecord[] = [];
  private readonly cancels = new Map<number, () => void>();
  private readonly daemon = new Map<number, string[]>();
  private nextTransferId = 1;

  constructor(private readonly deps: InstanceWorkDeps) {}

  /** `PUT /api/v0/instances/request_logs/{id}/`: the token of a ready result holding the selected lines. */
  requestLogs(user: UserRecord, id: number, options: { tail?: number; filter?: string; daemon?: boolean }): string {
    const instance = this.deps.find(user.id, id);
    if (!instance) throw notFound("invalid_id", "Invalid instance id.");
    const work = this.deps.work();
    const text = options.daemon ? this.daemonLog(instance) : (work?.logOf(instance, "container") ?? "");
    const token = this.deps.results.open();
    this.deps.results.fill(token, logSelection(text, options));
    return token;
  }

  /** `PUT /api/v0/instances/command/{id}/`: runs an allowed command on the machine; its output at the token, once done. */
  execute(user: UserRecord, id: number, command: string): string {
    const instance = this.deps.find(user.id, id);
    if (!instance) throw badRequest("invalid_container_id", "Invalid instance id.");
    const { program, args } = allowedCommand(command);
    const work = this.runningMachine(instance, "invalid_container");
    const token = this.deps.results.open();
    this.note(instance, `execute: ${command}`);
    work.run(instance, program, args).then(
      ({ output }) => this.deps.results.fill(token, output),
      (error: Error) => this.deps.results.fill(token, `${error.message}\n`),
    );
    return token;
  }

  /** A copy between two of the user's instances (`PUT /api/v0/commands/copy_direct/`), started. */
  copyBetween(user: UserRecord, src: { id: number; path: string }, dst: { id: number; path: string }): TransferRecord {
    const [from, to] = [this.owned(user, src.id), this.owned(user, dst.id)];
    this.checkPath(src.path, "src_path");
    this.checkPath(dst.path, "dst_path");
    const work = this.runningMachine(from, "invalid_args", "source");
    this.runningMachine(to, "invalid_args", "destination");
    return this.start(work, { kind: "copy", ownerId: user.id, srcId: from.id, dstId: to.id, from: `C.${from.id}:${src.path}`, to: `C.${to.id}:${dst.path}` }, { instance: from, path: src.path }, { instance: to, path: dst.path });
  }

  /** A cloud copy (`POST /api/v0/commands/rclone/`), started: into the connection's bucket, or out of it. */
  cloudCopy(user: UserRecord, request: { instanceId: number; connection: string | number; src: string; dst: string; toCloud: boolean; dryRun: boolean }): TransferRecord {
    const instance = this.owned(user, request.instanceId);
    const connection = cloudConnections.find(user, request.connection);
    this.checkPath(request.src, "src");
    this.checkPath(request.dst, "dst");
    const work = this.runningMachine(instance, "invalid_args");
    const machine: Place = { instance, path: request.toCloud ? request.src : request.dst };
    const bucket: Place = { folder: connection.folder, path: request.toCloud ? request.dst : request.src };
    const names = { machine: `C.${instance.id}:${machine.path}`, cloud: `${connection.cloudType}.${connection.id}:${bucket.path}` };
    const record = { kind: "sync" as const, ownerId: user.id, ...(request.toCloud ? { srcId: instance.id } : { dstId: instance.id }) };
    const [from, to] = request.toCloud ? [machine, bucket] : [bucket, machine];
    const [fromName, toName] = request.toCloud ? [names.machine, names.cloud] : [names.cloud, names.machine];
    if (request.dryRun) return this.record({ ...record, from: fromName, to: toName, state: "done", message: "dry run: nothing copied" });
    return this.start(work, { ...record, from: fromName, to: toName }, from, to);
  }

  /** Cancels the running copies (`copy`) or cloud copies (`sync`) into, or out of, an instance: how many. */
  cancel(user: UserRecord, kind: "copy" | "sync", instanceId: number): number {
    this.owned(user, instanceId);
    const running = this.transfers.filter((t) => t.ownerId === user.id && t.kind === kind && t.state === "running" && (t.dstId === instanceId || (kind === "sync" && t.srcId === instanceId)));
    for (const transfer of running) {
      transfer.state = "canceled";
      transfer.endedAt = this.deps.now();
      this.cancels.get(transfer.id)?.();
    }
    return running.length;
  }

  /** The user's copies, the newest last (the control API's view). */
  transfersOf(ownerId: number): TransferRecord[] {
    return this.transfers.filter((t) => t.ownerId === ownerId);
  }

  /** The instance's daemon log: what the emulator did with it. */
  daemonLog(instance: InstanceRecord): string {
    const machine = this.deps.work()?.logOf(instance, "daemon") ?? "";
    const own = (this.daemon.get(instance.id) ?? []).join("");
    return machine + own;
  }

  private note(instance: InstanceRecord, text: string): void {
    const lines = this.daemon.get(instance.id) ?? [];
    lines.push(`${new Date(this.deps.now()).toISOString()} ${text}\n`);
    if (lines.length > MAX_DAEMON_LINES) lines.splice(0, lines.length - MAX_DAEMON_LINES);
    this.daemon.set(instance.id, lines);
  }

  private start(work: MachineWork, fields: Omit<TransferRecord, "id" | "state" | "startedAt">, from: Place, to: Place): TransferRecord {
    const transfer = this.record({ ...fields, state: "running" });
    const running = work.copy(from, to);
    this.cancels.set(transfer.id, running.cancel);
    const instance = "instance" in to ? to.instance : "instance" in from ? from.instance : undefined;
    if (instance) this.note(instance, `${fields.kind === "copy" ? "copy" : "cloud copy"} ${transfer.from} -> ${transfer.to}: started`);
    running.done.then(
      () => this.end(transfer, "done"),
      (error: Error) => this.end(transfer, transfer.state === "canceled" ? "canceled" : "failed", error.message),
    );
    return transfer;
  }

  private end(transfer: TransferRecord, state: TransferRecord["state"], message?: string): void {
    this.cancels.delete(transfer.id);
    if (transfer.state === "running") Object.assign(transfer, { state, endedAt: this.deps.now(), ...(message && { message }) });
  }

  private record(fields: Omit<TransferRecord, "id" | "startedAt">): TransferRecord {
    const transfer: TransferRecord = { id: this.nextTransferId++, startedAt: this.deps.now(), ...fields };
    this.transfers.push(transfer);
    if (this.transfers.length > MAX_TRANSFERS) this.transfers.splice(0, this.transfers.length - MAX_TRANSFERS);
    return transfer;
  }

  private owned(user: UserRecord, id: number): InstanceRecord {
    const instance = this.deps.find(user.id, id);
    if (!instance) throw notFound("no_such_instance", `Instance ${id} does not exist (or is not yours).`);
    return instance;
  }

  /** The machines, when the instance's machine is up; else the refusal `code`. */
  private runningMachine(instance: InstanceRecord, code: string, role = "instance"): MachineWork {
    const work = this.deps.work();
    if (!work) throw badRequest(code, `Instance ${instance.id} has no machine here: the emulator was started without its machines (--no-ssh).`);
    if (!work.isUp(instance)) throw badRequest(code, `The ${role} instance ${instance.id} is not running: start it (and wait for running) first.`);
    return work;
  }

  /** A path of a copy: absolute or relative, without `..` (the service's own rule for a Unix path). */
  private checkPath(text: string, field: string): void {
    if (!text || text.includes("\0") || path.posix.normalize(`/${text}`).split("/").includes("..") || text.split("/").includes("..")) {
      throw badRequest("invalid_args", `Invalid ${field}: ${JSON.stringify(text.slice(0, 80))} (a path without ".." is needed).`);
    }
  }
}

/** An instance id as copies name it: `123`, `C.123`, or a number. Undefined for anything else (local, a volume, a cloud). */
export function instanceIdOf(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  const match = typeof value === "string" ? /^(?:C\.)?(\d{1,15})$/.exec(value.trim()) : null;
  return match ? Number(match[1]) : undefined;
}

