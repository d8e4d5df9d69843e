import { ChildProcess, spawn, SpawnOptions } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { TailBuffer } from "../../sdk/tail-buffer";
import { userCacheDir } from "../../sdk/cache-dir";
import { ClockReading, clockWaits, installClockTools, writeClock } from "./clock";
import { busyReading, GpuModel, GpuReading, installNvidiaSmi, perGpu, writeReading } from "./gpus";
import { containerEnv, diskOf, InstanceWatcher, Lifecycle, scheduledStatus } from "../domain/instances";
import { killGroup, killMarked, runMarkOf } from "./processes";
import { MachineNetwork, ownNetworkUnsupported } from "./network";
import { EgressProxy } from "./egress-proxy";
import { MachineSpace } from "./machine-space";
import { MACHINE_PATH } from "./machine-setup";
import type { InstanceRecord } from "../domain/records";

/** The environment variable that marks every process of a machine (and their children), to find them at stop. */
export const MACHINE_MARK = "GPU_RENTAL_MACHINE";

/**
 * The emulated machines behind instances of an SSH or Jupyter runtype: namespaces and a root filesystem of its own
 * each (./machine-space.ts), the processes started in it (`onstart` at boot, commands over SSH) and the boot that
 * brings an instance's SSH endpoint up. The instance's lifecycle is the truth: a machine boots when the clock says
 * the instance is booted; when the instance stops, fails or is destroyed, its processes end, and its files are
 * kept in its folder (a stop), or go with it (a destroy).
 *
 * What a machine's processes reach of this computer, and why: docs/emulator.md ("What an emulated machine reaches").
 */

export interface MachineLimits {
  /** Longest a process of an instance (onstart, an SSH command) may run before it is killed. */
  maxRunMs: number;
  /** The onstart output kept: the last bytes; what came before is dropped (and counted). */
  maxOutputBytes: number;
  /** How long a boot waits for onstart to finish before the instance reports `running` anyway. */
  onstartWaitMs: number;
}

export const DEFAULT_MACHINE_LIMITS: MachineLimits = { maxRunMs: 3_600_000, maxOutputBytes: 1 << 20, onstartWaitMs: 60_000 };

/** What the machines need from the rest of the emulator. */
export interface MachineHooks {
  now(): number;
  /** The emulator's clock as the machines' `date` and `sleep` follow it (./clock.ts). */
  clock(): ClockReading;
  lifecycle(): Lifecycle;
  /** Where the instance's SSH will be served (before it is: the port may still move when it comes up). */
  assign(instance: InstanceRecord): { host: string; port: number };
  /** Brings the instance's SSH endpoint up; resolves once it accepts connections. */
  up(instance: InstanceRecord): Promise<void>;
  /** Takes it down: no new connection, every open one closed. Idempotent. */
  down(instance: InstanceRecord): void;
  /** The instance is gone: what was kept for it (its port) is free. */
  release(instance: InstanceRecord): void;
  /** A new instance API key for an instance whose key this process never saw (state restored from disk). */
  reissueKey(instance: InstanceRecord): string;
  /** The emulator's API port on loopback once it listens (undefined: it serves none), which machines reach. */
  servicePort(): Promise<number | undefined>;
  /** The machine cannot boot (its namespaces or its endpoint failed): the instance has crashed. */
  crashed(instance: InstanceRecord, message: string): void;
  /**
   * Folders of this computer the instance's image holds (a deployment's worker: the vendor's worker program), bound
   * read-only where the image has them; made before the machine boots (a first make may take a while).
   */
  imageFolders?(instance: InstanceRecord): Promise<{ source: string; target: string }[]>;
}

/** The onstart of an instance's current (or last) boot, as the control API shows it. */
export interface OnstartReport {
  state: "running" | "exited" | "killed";
  exit_code: number | null;
  signal: string | null;
  started_at: number;
  ended_at: number | null;
  /** Killed for running longer than the limit. */
  timed_out: boolean;
  /** Standard output and error, interleaved; the last `maxOutputBytes`. */
  output: string;
  /** Bytes of output dropped from the start to keep within the limit. */
  dropped_bytes: number;
}

/** A process of a machine: stopped with its whole process group. */
export interface MachineProcess {
  child: ChildProcess;
  /** Whether it was killed for running longer than `maxRunMs`. */
  timedOut(): boolean;
  kill(signal?: NodeJS.Signals): void;
}

interface Machine {
  instance: InstanceRecord;
  /** Its folder: its files while it is down (`disk.tar`), the mount point of its disk. */
  dir: string;
  /** Marks every process of this machine (and their children) in their environment, to find them at stop. */
  marker: string;
  /** The boot (`bootStartedAt`) running or starting now; undefined while the instance is not running. */
  boot?: number;
  apiKey?: string;
  processes: Set<MachineProcess>;
  onstart?: { report: OnstartReport; output: TailBuffer };
  /** What its container printed over its boots (onstart's output), and its daemon's lines about it: its logs. */
  logs: { container: TailBuffer; daemon: TailBuffer };
  /** What its `nvidia-smi` reports (./gpus.ts); kept across its boots. */
  gpus: GpuReading;
  /** Its current boot's network (./network.ts): its namespace and published ports. */
  network?: MachineNetwork;
  /** Its current boot's namespaces, from their start to the end of its stop. */
  space?: MachineSpace;
  /** Its last stop: its files being kept, which the next boot waits for. */
  stopping?: Promise<void>;
}

/** The shell commands run with, as a container's root user would have it. */
export const SHELL = fs.existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";

/** A machine's home: its root user's, and the folder its processes start in. */
export const HOME = "/root";

/**
 * Why this computer cannot run emulated machines (Linux's namespaces, a POSIX shell), or undefined when it can:
 * elsewhere, instances would crash at every boot, so the emulator serves them without machines and says so. On
 * Linux, what the namespaces need is checked at each boot (./isolation.ts): an instance that cannot have its
 * machine shows why, `exited`.
 */
export function machinesUnsupported(): string | undefined {
  if (process.platform !== "linux") return `this computer runs ${process.platform === "win32" ? "Windows" : process.platform}: the emulated machines run in Linux's namespaces`;
  if (!fs.existsSync(SHELL)) return `this computer has no ${SHELL} to run the instances' commands with`;
  return undefined;
}

/** How the machines are kept beyond what their instances say. */
export interface MachineOptions {
  /** Keep the running machines' files when the emulator closes (it has a data dir): their next boot finds them. */
  persistent?: boolean;
  /** This computer's folders no machine may see (the data dir), besides the machines' own, the user's home and cache. */
  covered?: string[];
}

export class Machines implements InstanceWatcher {
  private readonly machines = new Map<number, Machine>();
  private readonly emulatorId = randomBytes(4).toString("hex");
  /** Why the machines run in this computer's network, not each in its own (./network.ts); undefined when they do not. */
  readonly sharedNetworkWhy?: string;
  /** A short folder for the relays' sockets, made only when the machines' folder's path is too long for a socket's. */
  private shortSockets?: string;
  /** The way out of their own networks (./egress-proxy.ts), started with the first machine that has one. */
  private readonly egress = new EgressProxy();

  /** The start of the MACHINE_MARK of every process of this emulator's machines. */
  get markPrefix(): string {
    return `${this.emulatorId}-`;
  }

  constructor(
    /** The folder of the machines' folders (one per instance), their volumes' and the emulator's tools for them. */
    readonly root: string,
    readonly limits: MachineLimits,
    private readonly hooks: MachineHooks,
    private readonly options: MachineOptions = {},
  ) {
    this.clockMoved();
    this.sharedNetworkWhy = ownNetworkUnsupported();
  }

  /** The emulator's clock moved: the machines' `date` and `sleep` see it at their next look. */
  clockMoved(): void {
    writeClock(this.clockFile, this.hooks.clock());
  }

  /** The emulator times (ms) the machine's `sleep`s wait for now: none while its processes are busy, nor while it is down. */
  clockWaitsOf(instanceId: number): number[] {
    const space = this.machines.get(instanceId)?.space;
    if (!space) return [];
    // Its processes by their number inside, in its own /proc.
    return clockWaits(this.waitsOf(instanceId), (pid) => running(path.join(`/proc/${space.init}/root/proc`, String(pid))));
  }

  created(instance: InstanceRecord, instanceApiKey: string): void {
    const machine = this.machineOf(instance);
    if (!machine) return;
    machine.apiKey = instanceApiKey;
    this.observe(instance);
  }

  /** Catches up with the instance's lifecycle: boots a machine that is due, stops one that should not run. */
  observe(instance: InstanceRecord): void {
    const machine = this.machineOf(instance);
    if (!machine) return;
    instance.sshEndpoint ??= this.hooks.assign(instance);
    if (scheduledStatus(instance, this.hooks.now(), this.hooks.lifecycle()) === "running") {
      if (machine.boot === instance.bootStartedAt) return;
      if (machine.boot !== undefined) this.shutdown(machine);
      const boot = (machine.boot = instance.bootStartedAt);
      instance.bootPending = boot;
      void this.boot(machine, boot);
      return;
    }
    if (machine.boot !== undefined) this.shutdown(machine);
    // Whatever boot comes next reports `running` only once its machine is up.
    instance.bootPending = instance.bootStartedAt;
  }

  removed(instance: InstanceRecord): void {
    const machine = this.machines.get(instance.id);
    if (!machine) return;
    this.shutdown(machine, false);
    this.hooks.release(instance);
    this.machines.delete(instance.id);
    fs.rmSync(machine.dir, { recursive: true, force: true });
    fs.rmSync(this.toolsOf(instance.id), { recursive: true, force: true });
  }

  /** What the instance's `nvidia-smi` reports; undefined for an instance without a machine (runtype `args`). */
  gpusOf(instance: InstanceRecord): GpuReading | undefined {
    const machine = this.machineOf(instance);
    return machine && { utilization: [...machine.gpus.utilization], memoryUsedMiB: [...machine.gpus.memoryUsedMiB] };
  }

  /**
   * Sets what the instance's `nvidia-smi` reports (one value for every GPU, or one per GPU): its processes see it
   * at their next call. Throws a RangeError for values that do not fit the machine.
   */
  setGpus(instance: InstanceRecord, change: { utilization?: number | number[]; memoryUsedMiB?: number | number[] }): GpuReading {
    const machine = this.machineOf(instance);
    if (!machine) throw new RangeError(`instance ${instance.id} runs runtype args: it has no machine of its own to report GPUs`);
    const model = gpuModel(instance);
    const next: GpuReading = {
      utilization: change.utilization === undefined ? machine.gpus.utilization : perGpu(change.utilization, model.count, "utilization"),
      memoryUsedMiB: change.memoryUsedMiB === undefined ? machine.gpus.memoryUsedMiB : perGpu(change.memoryUsedMiB, model.count, "memory_used_mib"),
    };
    if (next.utilization.some((u) => !(u >= 0 && u <= 100))) throw new RangeError("utilization: percent, 0 to 100");
    if (next.memoryUsedMiB.some((m) => !(m >= 0 && m <= model.memoryTotalMiB))) throw new RangeError(`memory_used_mib: 0 to ${model.memoryTotalMiB} (the GPU's memory)`);
    machine.gpus = next;
    if (fs.existsSync(this.binOf(instance.id))) writeReading(this.binOf(instance.id), model, next);
    return this.gpusOf(instance)!;
  }

  /** Whether the instance's machine is up: booted, its SSH served, and the instance reports `running`. */
  isUp(instance: InstanceRecord): boolean {
    const machine = this.machines.get(instance.id);
    return !!machine && machine.boot === instance.bootStartedAt && instance.bootPending === undefined;
  }

  /**
   * The machine's home (/root) as this computer reaches it while the machine runs (through its first process's
   * root: /proc/<pid>/root/root), for tests and developers; undefined while it is down.
   */
  sandboxOf(instanceId: number): string | undefined {
    const space = this.machines.get(instanceId)?.space;
    return space?.alive ? `/proc/${space.init}/root${HOME}` : undefined;
  }

  /** What the machine printed over its boots (`container`), or its daemon's lines about it: empty without a machine. */
  logOf(instanceId: number, which: "container" | "daemon"): string {
    return this.machines.get(instanceId)?.logs[which].text() ?? "";
  }

  onstartOf(instanceId: number): OnstartReport | undefined {
    const onstart = this.machines.get(instanceId)?.onstart;
    return onstart && { ...onstart.report, output: onstart.output.text(), dropped_bytes: onstart.output.dropped };
  }

  /**
   * The environment of the instance's processes: a container root's basics, the account's variables as they were
   * when it was created, the instance's `env` (without its
   * port mappings), `CONTAINER_ID` and `CONTAINER_API_KEY`, then `extra`. Nothing of the emulator's own
   * environment but `PATH` (its secrets stay out), and the mark of the run that started it (processes/runMarkOf).
   */
  environment(instance: InstanceRecord, extra: Record<string, string> = {}): Record<string, string> {
    const machine = this.machines.get(instance.id);
    if (!machine) throw new Error(`instance ${instance.id} has no machine`);
    return {
      // The machine's own tools (nvidia-smi) first, as a GPU machine has them.
      PATH: MACHINE_PATH,
      HOME,
      PWD: HOME,
      USER: "root",
      LOGNAME: "root",
      SHELL,
      // The account's variables, then the instance's own `env`, which wins on a clash.
      ...instance.accountEnv,
      ...Object.fromEntries(containerEnv(instance.config)),
      ...this.addressEnv(machine),
      CONTAINER_ID: String(instance.id),
      ...(machine.apiKey && { CONTAINER_API_KEY: machine.apiKey }),
      ...extra,
      ...runMarkOf(),
      [MACHINE_MARK]: machine.marker,
    };
  }

  /**
   * Where the machine is reached, as the service tells a container: its public address and, for each container
   * port, the host port it is published on (`VAST_TCP_PORT_8000`), SSH's included.
   */
  private addressEnv(machine: Machine): Record<string, string> {
    const served = machine.instance.sshEndpoint;
    const env: Record<string, string> = { PUBLIC_IPADDR: served?.host ?? machine.instance.publicIp };
    if (served) env.VAST_TCP_PORT_22 = String(served.port);
    for (const [port, hostPort] of Object.entries(machine.network?.published ?? {})) env[`VAST_TCP_PORT_${parseInt(port)}`] = String(hostPort);
    const proxy = machine.network?.egressPort;
    if (proxy) {
      // The way out of its own network: what honours a proxy reaches the internet; its loopback stays its own.
      const url = `http://127.0.0.1:${proxy}`;
      Object.assign(env, { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: "localhost,127.0.0.1,::1", no_proxy: "localhost,127.0.0.1,::1" });
    }
    return env;
  }

  /**
   * Starts a process on the instance's machine, as its root, in its home, in a process group of its own: it is
   * killed (with its children) when the instance stops, or when it runs longer than `maxRunMs`.
   */
  spawn(instance: InstanceRecord, file: string, args: string[], options: { env?: Record<string, string>; stdio?: SpawnOptions["stdio"] } = {}): MachineProcess {
    const machine = this.machines.get(instance.id);
    if (!machine || machine.boot === undefined || !machine.space) throw new Error(`instance ${instance.id} is not running`);
    const [program, programArgs] = machine.space.command(file, args);
    const child = spawn(program, programArgs, {
      cwd: "/",
      env: this.environment(instance, options.env),
      detached: true,
      stdio: options.stdio ?? "pipe",
    });
    let timedOut = false;
    const kill = (signal: NodeJS.Signals = "SIGKILL") => killGroup(child, signal);
    const handle: MachineProcess = { child, timedOut: () => timedOut, kill };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, this.limits.maxRunMs);
    timer.unref();
    machine.processes.add(handle);
    // A stop at the moment of the start (forked, not yet running its program: in no group, not yet marked) finds
    // neither the group nor the mark: the process ends as soon as it runs instead.
    const boot = machine.boot;
    child.once("spawn", () => {
      if (machine.boot !== boot) kill();
    });
    child.on("error", () => undefined);
    child.on("exit", () => {
      clearTimeout(timer);
      machine.processes.delete(handle);
    });
    return handle;
  }

  /** Stops every machine (the emulator is closing): their processes end; their files are kept with the data dir. */
  close(): void {
    for (const machine of this.machines.values()) this.shutdown(machine, !!this.options.persistent, true);
    this.egress.close();
    if (this.shortSockets) fs.rmSync(this.shortSockets, { recursive: true, force: true });
  }

  /** A volume was deleted: its files go with it. */
  volumeRemoved(volumeId: number): void {
    fs.rmSync(this.volumeDir(volumeId), { recursive: true, force: true });
  }

  /** The instance's volumes: each a folder of its own beside the machines', which outlives instances. */
  private volumesOf(machine: Machine): { source: string; target: string }[] {
    return (machine.instance.mounts ?? []).map((mount) => {
      // Creation refuses `.` and `..` segments; the path is the machine's, resolved inside its root.
      const target = path.posix.resolve("/", mount.path);
      if (/[\t\n]/.test(target)) throw new Error(`the mount path ${JSON.stringify(mount.path)} has a tab or a line break`);
      return { source: this.volumeDir(mount.volumeId), target };
    });
  }

  private volumeDir(volumeId: number): string {
    return path.join(this.root, ".volumes", String(volumeId));
  }

  /** The emulator's folders of the machine, beside its own: its tools, its sleeps', its relay's sockets. */
  private toolsOf(instanceId: number): string {
    return path.join(this.root, ".tools", String(instanceId));
  }

  /** The machine's tools (./machine-setup.ts's INSIDE.bin), read-only in the machine. */
  private binOf(instanceId: number): string {
    return path.join(this.toolsOf(instanceId), "bin");
  }

  private waitsOf(instanceId: number): string {
    return path.join(this.toolsOf(instanceId), "waits");
  }

  /** The clock every machine's tools read, in a folder of its own (the machines see the folder). */
  private get clockFile(): string {
    return path.join(this.root, ".tools", "clock", "now");
  }

  private machineOf(instance: InstanceRecord): Machine | undefined {
    if (instance.runtype === "args") return undefined;
    let machine = this.machines.get(instance.id);
    if (!machine) {
      const gpus = busyReading(gpuModel(instance));
      const logs = { container: new TailBuffer(this.limits.maxOutputBytes), daemon: new TailBuffer(this.limits.maxOutputBytes) };
      machine = { instance, dir: path.join(this.root, String(instance.id)), marker: `${this.emulatorId}-${instance.id}`, processes: new Set(), gpus, logs };
      this.machines.set(instance.id, machine);
    }
    machine.instance = instance;
    return machine;
  }

  /** Boots: the namespaces, then onstart (waited for, up to a limit), then the SSH endpoint; then `running`. */
  private async boot(machine: Machine, boot: number): Promise<void> {
    const { instance } = machine;
    const current = () => machine.boot === boot;
    try {
      await machine.stopping;
      if (!current()) return;
      // A recycled container starts from its image again: nothing written before is left.
      if (instance.freshBoot === boot) fs.rmSync(machine.dir, { recursive: true, force: true });
      fs.mkdirSync(machine.dir, { recursive: true });
      installNvidiaSmi(this.binOf(instance.id), gpuModel(instance), machine.gpus);
      installClockTools(this.binOf(instance.id));
      machine.apiKey ??= this.hooks.reissueKey(instance);
      const imageFolders = (await this.hooks.imageFolders?.(instance)) ?? [];
      if (!current()) return;
      await this.openSpace(machine, boot, imageFolders);
      if (!current()) return;
      await this.openNetwork(machine, boot);
      if (!current()) return;
      const onstart = instance.config.onstart?.trim();
      if (onstart) {
        const finished = this.startOnstart(machine, onstart);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([finished, new Promise((resolve) => (timer = setTimeout(resolve, this.limits.onstartWaitMs)))]);
        clearTimeout(timer);
      }
      if (!current()) return;
      await this.hooks.up(instance);
      if (!current()) return this.hooks.down(instance);
      if (instance.bootPending === boot) instance.bootPending = undefined;
      this.daemonLine(machine, "container started: running");
    } catch (error) {
      if (!current()) return;
      this.shutdown(machine);
      this.hooks.crashed(instance, `The emulated machine could not boot: ${(error as Error).message}`);
    }
  }

  /** The TCP container ports the machine publishes, but SSH's (the emulator's own). */
  private portsOf(instance: InstanceRecord): number[] {
    return Object.keys(instance.ports).flatMap((key) => /^(\d+)\/tcp$/.exec(key)?.[1] ?? []).map(Number).filter((port) => port !== 22);
  }

  /**
   * Only a machine that serves a port gets a network of its own (two may serve one port); the others stay in this
   * computer's, which costs no relay process.
   */
  private ownNetwork(instance: InstanceRecord): boolean {
    return !this.sharedNetworkWhy && this.portsOf(instance).length > 0;
  }

  /** The marks of the machine's processes of this computer (its namespaces', its relay), so that its stop finds them. */
  private marksOf(machine: Machine): Record<string, string> {
    return { ...runMarkOf(), [MACHINE_MARK]: machine.marker };
  }

  /** Makes the boot's namespaces and root filesystem (./machine-space.ts), its files from its last stop in it. */
  private async openSpace(machine: Machine, boot: number, imageFolders: { source: string; target: string }[] = []): Promise<void> {
    const { instance } = machine;
    const space = await MachineSpace.start({
      dir: machine.dir,
      sizeMiB: Math.max(1, Math.ceil(diskOf(instance) * 1024)),
      ownNetwork: this.ownNetwork(instance),
      hostname: `C.${instance.id}`,
      bin: this.binOf(instance.id),
      waits: this.waitsOf(instance.id),
      clockDir: path.dirname(this.clockFile),
      volumes: [...this.volumesOf(machine), ...imageFolders.map((folder) => ({ ...folder, readOnly: true }))],
      // The emulator's folders, and its user's home and cache (their keys, which the machine's root may read
      // where it is that user), wherever they lie in a system folder the machine sees.
      covered: [this.root, os.homedir(), userCacheDir(), ...(this.options.covered ?? [])],
      env: this.marksOf(machine),
    });
    if (machine.boot !== boot) return space.end();
    machine.space = space;
  }

  /**
   * Makes the boot's network before anything runs on the machine: its relay (where it has a network of its own)
   * and a loopback port for each TCP container port it publishes but SSH's, shown in the instance's `ports`.
   */
  private async openNetwork(machine: Machine, boot: number): Promise<void> {
    const { instance } = machine;
    const ports = this.portsOf(instance);
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...this.marksOf(machine) };
    const space = machine.space!;
    const own = this.ownNetwork(instance) ? { enter: (file: string, args: string[]) => space.networkCommand(file, args), sockets: this.socketsOf(instance.id) } : undefined;
    const service = own && (await this.hooks.servicePort());
    const egress = own && (await this.egress.port());
    if (machine.boot !== boot) return;
    const reach = [service, egress].filter((port): port is number => !!port);
    const network = (machine.network = new MachineNetwork({ own, ports, reach, host: instance.sshEndpoint?.host ?? "127.0.0.1", env, egress: egress || undefined }));
    await network.open();
    if (machine.network === network) instance.publishedPorts = { ...network.published };
  }

  /** The folder of the machine's relay sockets: beside its tools, unless that path is too long for a socket. */
  private socketsOf(instanceId: number): string {
    const dir = path.join(this.toolsOf(instanceId), "ports");
    // A unix socket's path holds 107 bytes at most (Linux), its name (`host-65535`) included.
    if (Buffer.byteLength(dir) <= 96) return dir;
    this.shortSockets ??= fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-ports-"));
    return path.join(this.shortSockets, String(instanceId));
  }

  /** A line of the machine's daemon log, stamped with the emulator's time. */
  private daemonLine(machine: Machine, text: string): void {
    machine.logs.daemon.push(Buffer.from(`${new Date(this.hooks.now()).toISOString()} ${text}\n`));
  }

  /** Runs onstart in the machine's home with the instance's environment; resolves when it has exited. */
  private startOnstart(machine: Machine, script: string): Promise<void> {
    const report: OnstartReport = {
      state: "running", exit_code: null, signal: null, started_at: Date.now(), ended_at: null, timed_out: false, output: "", dropped_bytes: 0,
    };
    const output = new TailBuffer(this.limits.maxOutputBytes);
    machine.onstart = { report, output };
    const process = this.spawn(machine.instance, SHELL, ["-c", script], { stdio: ["ignore", "pipe", "pipe"] });
    const take = (chunk: Buffer) => {
      output.push(chunk);
      machine.logs.container.push(chunk);
    };
    process.child.stdout!.on("data", take);
    process.child.stderr!.on("data", take);
    return new Promise((resolve) => {
      process.child.on("close", (code, signal) => {
        report.exit_code = code;
        report.signal = signal;
        report.timed_out = process.timedOut();
        report.ended_at = Date.now();
        if (report.state === "running") report.state = code === null ? "killed" : "exited";
        resolve();
      });
      process.child.on("error", (error) => {
        take(Buffer.from(`${error.message}\n`));
        resolve();
      });
    });
  }

  /**
   * The instance stopped (or is going): its endpoint closes, its processes and their children end, then its files
   * are packed into its folder (`keep`, at once when `waiting`: the emulator closing) and its namespaces end.
   */
  private shutdown(machine: Machine, keep = true, waiting = false): void {
    if (machine.boot !== undefined) this.daemonLine(machine, keep ? "container stopped" : "container destroyed");
    machine.boot = undefined;
    this.hooks.down(machine.instance);
    machine.network?.close();
    machine.network = undefined;
    machine.instance.publishedPorts = undefined;
    for (const process of machine.processes) process.kill();
    machine.processes.clear();
    if (machine.onstart?.report.state === "running") machine.onstart.report.state = "killed";
    const space = machine.space;
    machine.space = undefined;
    // Those that left the session's process group (`setsid`, a daemon) are in the machine's PID namespace.
    space?.killProcesses();
    const end = () => {
      space?.end();
      // What carries its mark outside the namespace (a relay, an nsenter between two steps).
      killMarked(MACHINE_MARK, machine.marker);
    };
    if (!space || !keep) return end();
    if (waiting) {
      try {
        space.saveSync();
      } finally {
        end();
      }
      return;
    }
    machine.stopping = space
      .save()
      .finally(end)
      .catch((error) => {
        // Unless the instance is gone meanwhile (its files with it).
        if (this.machines.get(machine.instance.id) === machine) this.hooks.crashed(machine.instance, `The emulated machine's files could not be kept at its stop: ${(error as Error).message}`);
      });
  }
}

function gpuModel(instance: InstanceRecord): GpuModel {
  const { offer } = instance;
  return { name: offer.gpu_name, count: Math.max(1, offer.num_gpus), memoryTotalMiB: Math.round(offer.gpu_ram ?? 0) };
}

/** Whether the process of a /proc folder runs (not a zombie, which has ended). */
function running(procDir: string): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(fs.readFileSync(path.join(procDir, "stat"), "latin1"));
  } catch {
    return false;
  }
}
