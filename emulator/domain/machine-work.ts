import type { InstanceRecord } from "./records";

/**
 * What the service's instance operations (logs, execute, copy, cloud copy) need of an instance's machine: the
 * port the domain asks through, which the emulated machines (emulator/sandbox/machine-work.ts) serve. Absent when
 * the emulator runs without machines: those operations then say so.
 */
export interface MachineWork {
  /** Whether the instance's machine is up (booted, its instance `running`). */
  isUp(instance: InstanceRecord): boolean;
  /** What the machine printed: its container's output (onstart, each boot), or its daemon's lines about it. */
  logOf(instance: InstanceRecord, which: "container" | "daemon"): string;
  /** Runs `program args` in the machine, as its root, in its home; resolves with its output once it exits. */
  run(instance: InstanceRecord, program: string, args: string[]): Promise<{ output: string; code: number | null }>;
  /**
   * Copies `from.path` of one place into `to.path` of another: each place a machine, or a folder of this computer
   * (a cloud connection's). rsync's rule: a source ending in `/` copies its contents, otherwise the folder itself.
   * Resolves when done; `cancel()` ends it (it then rejects).
   */
  copy(from: Place, to: Place): { done: Promise<void>; cancel(): void };
}

/** One side of a copy. */
export type Place = { instance: InstanceRecord; path: string } | { folder: string; path: string };
