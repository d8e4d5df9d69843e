import * as fs from "node:fs";

/** Whether the process runs: a zombie (ended, its parent has not reaped it yet) does not. Linux (/proc). */
export function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
