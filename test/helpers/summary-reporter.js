const path = require("node:path");

/** How many of the slowest test files the summary lists. */
const SLOWEST = 10;

/**
 * Prints the ten slowest test files (wall time of each file, from its start to its end in its worker), then the
 * suite's totals as one plain line at the very end ("N passed, N failed, N skipped"), the form CI reads in any
 * language: that line stays last.
 */
class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
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
module.exports = SummaryReporter;
