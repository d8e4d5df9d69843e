import { ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { TailBuffer } from "../../sdk/tail-buffer";
import type { MachineWork, Place } from "../domain/machine-work";
import type { InstanceRecord } from "../domain/records";
import { killGroup } from "./processes";
import { Machines, SHELL } from "./machines";

/** The output of a command `execute` runs that is kept: its last bytes. */
const MAX_COMMAND_OUTPUT = 1 << 20;

/**
 * The service's instance operations done on the emulated machines (the port emulator/domain/machine-work.ts):
 * commands run in the machine as its root; a copy is a `tar` that packs in one place piped into a `tar` that
 * unpacks in the other. On a machine both run inside it (its namespaces, its files); on this computer (a cloud
 * connection's folder) in that folder only: GNU tar does not write outside it (no `..`, no absolute names, links
 * made last).
 */
export class MachineWorker implements MachineWork {
  constructor(private readonly machines: Machines) {}

  isUp(instance: InstanceRecord): boolean {
    return this.machines.isUp(instance);
  }

  logOf(instance: InstanceRecord, which: "container" | "daemon"): string {
    return this.machines.logOf(instance.id, which);
  }

  run(instance: InstanceRecord, program: string, args: string[]): Promise<{ output: string; code: number | null }> {
    const process = this.machines.spawn(instance, program, args, { stdio: ["ignore", "pipe", "pipe"] });
    const output = new TailBuffer(MAX_COMMAND_OUTPUT);
    process.child.stdout!.on("data", (chunk: Buffer) => output.push(chunk));
    process.child.stderr!.on("data", (chunk: Buffer) => output.push(chunk));
    return new Promise((resolve, reject) => {
      process.child.on("error", reject);
      process.child.on("close", (code) => resolve({ output: output.text(), code }));
    });
  }

  copy(from: Place, to: Place): { done: Promise<void>; cancel(): void } {
    const packer = this.pack(from);
    const unpacker = this.unpack(to);
    packer.stdout!.pipe(unpacker.stdin!);
    const errors = new TailBuffer(4096);
    for (const child of [packer, unpacker]) child.stderr!.on("data", (chunk: Buffer) => errors.push(chunk));
    // A side that fails early must not leave the other waiting on its pipe.
    unpacker.stdin!.on("error", () => killGroup(packer, "SIGKILL"));
    const ended = (child: ChildProcess) =>
      new Promise<number | null>((resolve) => {
        child.on("error", () => resolve(-1));
        child.on("close", (code) => resolve(code));
      });
    const done = Promise.all([ended(packer), ended(unpacker)]).then(([packed, unpacked]) => {
      if (packed !== 0 || unpacked !== 0) throw new Error(`copy failed: ${errors.text().trim().split("\n").slice(-3).join("; ") || `exit ${packed}/${unpacked}`}`);
    });
    const cancel = () => [packer, unpacker].forEach((child) => killGroup(child, "SIGKILL"));
    return { done, cancel };
  }

  /** `tar` writing `place.path` (its contents, for a path ending in `/`) to its standard output. */
  private pack(place: Place): ChildProcess {
    const contents = place.path.endsWith("/");
    const target = place.path.replace(/\/+$/, "") || "/";
    const [dir, name] = contents ? [target, "."] : [path.posix.dirname(target), path.posix.basename(target)];
    const args = ["-C", dir, "-cf", "-", "--", name];
    if ("instance" in place) return this.machines.spawn(place.instance, "tar", args, { stdio: ["ignore", "pipe", "pipe"] }).child;
    return spawn("tar", ["-C", inside(place.folder, dir), "-cf", "-", "--", name], { stdio: ["ignore", "pipe", "pipe"], detached: true });
  }

  /** `tar` reading an archive from its standard input into `place.path` (made if missing). */
  private unpack(place: Place): ChildProcess {
    if ("instance" in place) {
      const script = 'mkdir -p -- "$1" && exec tar -C "$1" -xf -';
      return this.machines.spawn(place.instance, SHELL, ["-c", script, "unpack", place.path], { stdio: ["pipe", "ignore", "pipe"] }).child;
    }
    const dir = inside(place.folder, place.path);
    fs.mkdirSync(dir, { recursive: true });
    return spawn("tar", ["-C", dir, "--no-same-owner", "--no-same-permissions", "--no-overwrite-dir", "-xf", "-"], { stdio: ["pipe", "ignore", "pipe"], detached: true });
  }
}

/** `relative` resolved inside `folder` (a bucket's path, `/` being the bucket's top): never above it. */
function inside(folder: string, relative: string): string {
  return path.join(folder, path.posix.normalize(`/${relative}`));
}
