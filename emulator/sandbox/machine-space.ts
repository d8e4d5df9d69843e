import { ChildProcess, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { baseLayer, systemFolders } from "./base-layer";
import { asMachineOwner, isolationTools, IsolationTools, machineOwner, which } from "./isolation";
import { MACHINE_PATH, MOUNTED, STAGE_ONE, STAGE_TWO } from "./machine-setup";
import { killGroup, untilReady } from "./processes";

/**
 * An emulated machine's namespaces, from its boot to its stop: its own root filesystem, processes, host name and
 * IPC (and network, for a machine with one of its own), its root user this computer's unprivileged user
 * (./isolation.ts), made by the programs of ./machine-setup.ts. Two processes of this computer hold them: the
 * first stage's `unshare` (its mount namespace sees the machine's disk beside this computer's files: the machine's
 * files are packed from there) and the machine's first process, its child. Commands enter the machine with
 * `nsenter`.
 *
 * The machine's files live in its disk, a tmpfs, while it runs; when it stops they are packed into `disk.tar` in its
 * folder (what the processes wrote: its own layer, /root, /tmp, ...), unpacked at its next boot.
 */

/** How long a machine's namespaces may take to come up. */
const START_MS = 60_000;

export interface SpacePlan {
  /** The machine's folder: `mnt/` its disk's mount point, `disk.tar` its files while it is down. */
  dir: string;
  /** Its disk's size, MiB. */
  sizeMiB: number;
  ownNetwork: boolean;
  hostname: string;
  /** This computer's folders bound in the machine (./machine-setup.ts's INSIDE): its tools, its sleeps', the clock's. */
  bin: string;
  waits: string;
  clockDir: string;
  /** Volumes: this computer's folder, and the path in the machine (absolute, no `..`). */
  volumes: { source: string; target: string; readOnly?: boolean }[];
  /** This computer's folders the machine must not see where they lie in a system folder (the emulator's own). */
  covered: string[];
  /** The environment of the namespaces' two processes (the machine's mark, to find them). */
  env: Record<string, string>;
}

export class MachineSpace {
  private constructor(
    private readonly tools: IsolationTools,
    /** The first stage's `unshare`, in this computer's PID namespace (and the process group of both). */
    readonly holder: ChildProcess & { pid: number },
    /** The machine's first process (PID 1 inside), as this computer numbers it. */
    readonly init: number,
    private readonly dir: string,
    private readonly ownNetwork: boolean,
  ) {}

  /** Makes the namespaces and the root; resolves once the machine's first process waits. */
  static async start(plan: SpacePlan): Promise<MachineSpace> {
    const tools = isolationTools();
    const owner = machineOwner();
    const system = systemFolders();
    for (const dir of [plan.dir, path.join(plan.dir, "mnt"), plan.waits, ...plan.volumes.map((v) => v.source)]) {
      fs.mkdirSync(dir, { recursive: true });
      if (owner !== undefined) fs.chownSync(dir, owner, owner);
    }
    const args = [
      String(plan.sizeMiB), plan.ownNetwork ? "1" : "0", system.folders.join(" "),
      Object.entries(system.links).map(([name, target]) => `${name}=${target}`).join(" "),
      coveredIn(plan.covered, system.folders).join("\n"), plan.hostname, baseLayer(system.folders, owner), plan.bin, plan.waits, plan.clockDir,
      plan.volumes.map((volume) => `${volume.source}\t${volume.target}${volume.readOnly ? "\tro" : ""}`).join("\n"), STAGE_TWO, shell(),
      owner === undefined ? "" : String(owner), asMachineOwner(tools).join(" "),
    ];
    // Under root, the first stage is root's (its mounts made with this computer's root's rights, the more
    // locked for the machine); else the emulator's user's, root in a user namespace of its own.
    const user = owner === undefined ? ["--user", "--map-root-user"] : [];
    const command = [tools.unshare, ...user, "--mount", "--propagation", "private", "--", "/bin/sh", "-c", STAGE_ONE, "stage-one", ...args];
    // Its own process group: a Ctrl-C meant for the emulator is the emulator's; the stop kills the group.
    const holder = spawn(command[0], command.slice(1), { cwd: plan.dir, env: { PATH: MACHINE_PATH, ...plan.env }, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    // The machine's first process says `ready`; the first stage's errors are its standard error.
    await untilReady(holder, "its namespaces could not be made", START_MS).catch((error) => {
      killGroup(holder);
      throw error;
    });
    const init = childOf(holder.pid!);
    if (!init) throw new Error("its first process is gone");
    return new MachineSpace(tools, holder as ChildProcess & { pid: number }, init, plan.dir, plan.ownNetwork);
  }

  /** The command line that runs `file` inside the machine, as its root, in /root (the first process's folder). */
  command(file: string, args: string[]): [string, string[]] {
    const namespaces = ["--user", "--mount", "--pid", "--ipc", "--uts", ...(this.ownNetwork ? ["--net"] : [])];
    // nsenter makes its command root in the user namespace; where the emulator's user is the machine's root, it is
    // that already (and the namespace, made without privileges, forbids the group change that would come with it).
    const credentials = machineOwner() === undefined ? ["--preserve-credentials"] : [];
    return [this.tools.nsenter, ["--target", String(this.init), ...namespaces, ...credentials, "--root", "--wd", "--", file, ...args]];
  }

  /** The command line that runs `file` in the machine's network only, with this computer's files: its relay (./relay.ts). */
  networkCommand(file: string, args: string[]): [string, string[]] {
    return [this.tools.nsenter, ["--target", String(this.init), "--user", "--net", "--preserve-credentials", "--", file, ...args]];
  }

  /** Whether the machine's first process still runs. */
  get alive(): boolean {
    return this.holder.exitCode === null && this.holder.signalCode === null;
  }

  /** Kills (SIGKILL) every process of the machine but its first, which holds its namespaces. */
  killProcesses(): void {
    const own = namespaceOf(this.init, "pid");
    if (!own) return;
    for (const entry of fs.readdirSync("/proc")) {
      const pid = Number(entry);
      if (!pid || pid === this.init || namespaceOf(pid, "pid") !== own) continue;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
  }

  /** Packs the machine's files into its folder's `disk.tar` (its processes killed first: nothing writes meanwhile). */
  async save(): Promise<void> {
    const [program, args] = this.packCommand();
    const child = spawn(program, args, { cwd: "/", stdio: ["ignore", "ignore", "pipe"] });
    let said = "";
    child.stderr!.on("data", (chunk: Buffer) => (said += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve).on("error", () => resolve(null)));
    this.packed(code, said);
  }

  /** As save(), waiting (the emulator closing). */
  saveSync(): void {
    const [program, args] = this.packCommand();
    const done = spawnSync(program, args, { cwd: "/", encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] });
    this.packed(done.status, done.stderr ?? "");
  }

  /** Ends the namespaces: the machine's first process, and with it every process inside. */
  end(): void {
    killGroup(this.holder);
  }

  private packCommand(): [string, string[]] {
    // In the first stage's namespaces, from the machine's folder: its own files only (--one-file-system: not the
    // system folders overlaid on them; nor its mount points).
    const user = machineOwner() === undefined ? ["--user", "--preserve-credentials"] : [];
    const mounted = MOUNTED.map((name) => `--exclude=fs/${name}`);
    const tar = [this.tools.tar, "-C", "mnt", "--one-file-system", "--anchored", ...mounted, "-cf", "disk.tar.new", "fs", "upper"];
    return [this.tools.nsenter, ["--target", String(this.holder.pid), ...user, "--mount", "--root", "--wd", "--", ...tar]];
  }

  /** tar's status 1 is a file changed as it read it (a process killed mid-write): what it read is kept all the same. */
  private packed(code: number | null, said: string): void {
    const packed = path.join(this.dir, "disk.tar.new");
    if (code !== 0 && code !== 1) {
      fs.rmSync(packed, { force: true });
      throw new Error(`its files could not be kept: ${said.trim() || `tar ended with ${code}`}`);
    }
    fs.renameSync(packed, path.join(this.dir, "disk.tar"));
  }
}

/** Covered folders that lie in an overlaid system folder, relative to the root (`var/lib/gpu-rental`). */
function coveredIn(folders: string[], system: string[]): string[] {
  return folders
    .map((folder) => realpath(folder).slice(1))
    .filter((relative) => system.some((top) => relative.startsWith(`${top}/`)) && !/[\n]/.test(relative));
}

/** The child of `pid` (the first stage's one child: the machine's first process). */
function childOf(pid: number): number | undefined {
  try {
    const listed = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).map(Number).filter(Boolean);
    if (listed.length) return listed[0];
  } catch {
    // a kernel without the children file: the processes' parents say
  }
  for (const entry of fs.readdirSync("/proc")) {
    try {
      if (Number(fs.readFileSync(`/proc/${entry}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")[1]) === pid) return Number(entry);
    } catch {
      // not a process, or gone
    }
  }
  return undefined;
}

/** The namespace of a kind a process is in (`pid:[4026531836]`), or undefined when it is gone. */
function namespaceOf(pid: number, kind: "pid"): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/${kind}`);
  } catch {
    return undefined;
  }
}

function realpath(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    return path.resolve(folder);
  }
}

/** The shell of the machine's first process: bash where there is one, which reaps the processes orphaned to it. */
function shell(): string {
  return which("bash") ?? "/bin/sh";
}
