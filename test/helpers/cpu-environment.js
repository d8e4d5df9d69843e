const fs = require("node:fs");
const path = require("node:path");
const { TestEnvironment } = require("jest-environment-node");

/** Clock ticks a second in /proc's figures (USER_HZ: 100 on every Linux jest runs on here). */
const TICKS = 100;

/** Figures of one process from /proc/<pid>/stat: its parent, and its CPU ticks with those of the children it reaped. */
function readStat(pid) {
  // The command may hold spaces: the figures follow its closing parenthesis (field 3 onwards).
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { ppid: Number(fields[1]), ticks: fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) };
}

/**
 * CPU seconds this process, its live descendants (an emulator, a fork server, pulumi still running) and every
 * process they reaped spent so far: utime, stime, cutime and cstime of /proc's stat of each. A process that ends
 * moves into its parent's figures, so the sum only grows. Null where there is no /proc.
 */
function cpuSeconds() {
  try {
    const stats = new Map();
    for (const entry of fs.readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        stats.set(Number(entry), readStat(entry));
      } catch {
        // gone meanwhile: its figures are its parent's now
      }
    }
    const children = new Map();
    for (const [pid, { ppid }] of stats) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    let ticks = 0;
    for (const pending = [process.pid]; pending.length > 0; ) {
      const pid = pending.pop();
      ticks += stats.get(pid)?.ticks ?? 0;
      pending.push(...(children.get(pid) ?? []));
    }
    return ticks / TICKS;
  } catch {
    return null;
  }
}

/**
 * Jest's node environment that also measures the CPU a test file costs: a worker runs one file at a time, so the
 * difference between its setup and its teardown is the file's, its processes included. A
 * busy machine stretches a file's wall time, hardly its CPU seconds. Written to GPU_RENTAL_CPU_DIR (made by the
 * summary reporter) for the reporter to print beside the wall times.
 */
class CpuMeasuringEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async setup() {
    this.cpuAtStart = cpuSeconds();
    await super.setup();
  }

  async teardown() {
    await super.teardown();
    const dir = process.env.GPU_RENTAL_CPU_DIR;
    const end = cpuSeconds();
    if (!dir || end === null || this.cpuAtStart === null || !fs.existsSync(dir)) return;
    const name = `${path.basename(this.testPath)}-${process.pid}-${Date.now()}.json`;
    fs.writeFileSync(path.join(dir, name), JSON.stringify({ file: this.testPath, cpuSeconds: end - this.cpuAtStart }));
  }
}
module.exports = CpuMeasuringEnvironment;
