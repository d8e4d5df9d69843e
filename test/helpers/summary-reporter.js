const path = require("node:path");

/** How many of the slowest test files the summary lists. */
const SLOWEST = 10;

/**
 * Prints the ten slowest test files (wall time of each file, from its start to its end in its worker), then the
 * suite's totals as one plain line at the very end ("N passed, N failed, N skipped"), the form CI reads in any
 * language: that line stays last.
 *
 * Before that, it checks that no process the run started outlives it (nothingLeftRunning): a process left running
 * counts as a failed test of its own.
 */
class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  async onRunComplete(_contexts, results) {
    if (await nothingLeftRunning()) results.numFailedTests += 1;
    const timed = results.testResults
      .filter((file) => file.perfStats && file.perfStats.end > 0 && file.perfStats.start > 0)
      .map((file) => ({ file: path.relative(this.rootDir, file.testFilePath), seconds: (file.perfStats.end - file.perfStats.start) / 1000 }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, SLOWEST);
    if (timed.length > 0) {
      const width = Math.max(...timed.map((t) => t.file.length));
      const lines = timed.map((t) => `  ${t.file.padEnd(width)}  ${t.seconds.toFixed(1).padStart(6)} s`);
      process.stdout.write(`\nSlowest test files:\n${lines.join("\n")}\n`);
    }
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(`\n${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`);
  }
}
/**
 * Every process the run starts carries its mark (GPU_RENTAL_SUITE_RUN, global-setup.js), down to the engine's plugins
 * and the emulated machines' processes. The workers have ended when the run completes: whatever carries the mark
 * 10 s later was left behind by a test or by the code under test. Those are printed and ended; true when any was.
 */
async function nothingLeftRunning() {
  const run = process.env.GPU_RENTAL_SUITE_RUN;
  if (!run) return false;
  const { leftRunning, killMarked } = require(path.resolve(__dirname, "..", "..", "dist", "emulator", "sandbox", "processes.js"));
  if (!(await leftRunning("GPU_RENTAL_SUITE_RUN", run, 10_000)).length) return false;
  const left = killMarked("GPU_RENTAL_SUITE_RUN", run);
  const lines = left.map((p) => `  ${p.pid} ${p.command.slice(0, 300)}`);
  process.stdout.write(`\nFAIL processes started by the test run were still running after it (stopped now):\n${lines.join("\n")}\n`);
  return left.length > 0;
}

module.exports = SummaryReporter;
