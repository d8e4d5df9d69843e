const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

/** How many of the slowest test files the summary lists (GPU_RENTAL_SLOWEST=N for more, when looking for the CPU). */
const SLOWEST = Number(process.env.GPU_RENTAL_SLOWEST) || 10;

/**
 * Prints the slowest test files (ten unless asked) (wall time of each file, from its start to its end in its worker, and the CPU
 * seconds it cost, its processes included: test/helpers/cpu-environment.js), then the suite's totals as one plain
 * line at the very end ("N passed, N failed, N skipped"), the form CI reads in any language: that line stays last.
 *
 * Before that, it checks that no process the run started outlives it (nothingLeftRunning): a process left running
 * counts as a failed test of its own.
 */
class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    // Made before jest starts its workers, which inherit the variable.
    this.cpuDir = fs.mkdtempSync(path.join(os.tmpdir(), "gpu-rental-cpu-"));
    process.env.GPU_RENTAL_CPU_DIR = this.cpuDir;
  }

  async onRunComplete(_contexts, results) {
    // A run of one file transforms in this process, whose esbuild service (transform.js) would count as left
    // running: it is this process's own, done with once the tests are.
    await require("esbuild").stop();
    if (await nothingLeftRunning()) results.numFailedTests += 1;
    if (aDecoyRan()) results.numFailedTests += 1;
    const cpu = this.cpuByFile();
    const timed = results.testResults
      .filter((file) => file.perfStats && file.perfStats.end > 0 && file.perfStats.start > 0)
      .map((file) => ({ file: path.relative(this.rootDir, file.testFilePath), seconds: (file.perfStats.end - file.perfStats.start) / 1000, cpu: cpu.get(file.testFilePath) }))
      .sort((a, b) => b.seconds - a.seconds);
    if (timed.length > 0) {
      const slowest = timed.slice(0, SLOWEST);
      const width = Math.max(...slowest.map((t) => t.file.length));
      const figure = (seconds) => (seconds === undefined ? "?" : seconds.toFixed(1)).padStart(6);
      const lines = slowest.map((t) => `  ${t.file.padEnd(width)}  ${figure(t.seconds)} s  ${figure(t.cpu)} CPU-s`);
      const totalCpu = [...cpu.values()].reduce((sum, seconds) => sum + seconds, 0);
      process.stdout.write(`\nSlowest test files (wall, CPU):\n${lines.join("\n")}\nAll ${timed.length} files: ${totalCpu.toFixed(0)} CPU-s\n`);
      // Every file's figures, for comparing runs: GPU_RENTAL_TIMINGS=<file.json>.
      if (process.env.GPU_RENTAL_TIMINGS) fs.writeFileSync(process.env.GPU_RENTAL_TIMINGS, JSON.stringify(timed, null, 1));
    }
    fs.rmSync(this.cpuDir, { recursive: true, force: true });
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(`\n${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`);
  }

  /** CPU seconds of each file, as its worker's environment wrote them. */
  cpuByFile() {
    const cpu = new Map();
    for (const name of fs.readdirSync(this.cpuDir)) {
      const { file, cpuSeconds } = JSON.parse(fs.readFileSync(path.join(this.cpuDir, name), "utf8"));
      cpu.set(file, (cpu.get(file) ?? 0) + cpuSeconds);
    }
    return cpu;
  }
}
/**
 * Every process the run starts carries its mark (GPU_RENTAL_TEST_RUN, global-setup.js), or a mark that extends it
 * (that of a `gpu-rental test` a test ran), down to the engine's plugins and the emulated machines' processes. The
 * workers have ended when the run completes: whatever carries the mark 10 s later was left behind by a test or by
 * the code under test. Those are printed and ended; true when any was.
 */
async function nothingLeftRunning() {
  const run = process.env.GPU_RENTAL_TEST_RUN;
  if (!run) return false;
  const { markedProcesses, killMarked, RUN_MARK } = require(path.resolve(__dirname, "..", "..", "dist", "emulator", "sandbox", "processes.js"));
  const marked = { prefix: true };
  const deadline = Date.now() + 10_000;
  while (markedProcesses(RUN_MARK, run, marked).length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  const left = killMarked(RUN_MARK, run, marked);
  if (!left.length) return false;
  const lines = left.map((p) => `  ${p.pid} ${p.command.slice(0, 300)}`);
  process.stdout.write(`\nFAIL processes started by the test run were still running after it (stopped now):\n${lines.join("\n")}\n`);
  return left.length > 0;
}

/** True when one of the decoys of Pulumi's hosts (decoy-hosts.js) ran: a test ran a Pulumi that is not ours. */
function aDecoyRan() {
  const { decoysThatRan, removeDecoys } = require("./decoy-hosts");
  const ran = decoysThatRan();
  removeDecoys();
  if (ran.length) process.stdout.write(`\nFAIL the run started Pulumi programs that are not gpu-rental's (decoys ahead on PATH):\n${ran.map((line) => `  ${line}`).join("\n")}\n`);
  return ran.length > 0;
}

module.exports = SummaryReporter;
