const fs = require("node:fs");
const path = require("node:path");

/** The skips a run may have, each with why it cannot run on the project's machines (test/allowed-skips.json). */
const ALLOWED = path.resolve(__dirname, "..", "allowed-skips.json");

/**
 * Lists every test the run skipped (a test that cannot run on a machine says why in its name, or in a warning of
 * its file). With GPU_RENTAL_REQUIRE_ALL=1, which .ci/run sets, a skip not on test/allowed-skips.json fails the
 * run: a machine that lacks something the suite needs (Python, the service spec beside the repository, a language
 * host) must not pass for one that ran everything.
 */
class SkipGate {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.namePattern = globalConfig.testNamePattern;
    this.error = undefined;
  }

  onRunComplete(_contexts, results) {
    const allowed = JSON.parse(fs.readFileSync(ALLOWED, "utf8")).allowed;
    const tests = results.testResults.flatMap((file) =>
      file.testResults.map((test) => ({ file: path.relative(this.rootDir, file.testFilePath), test: test.fullName, status: test.status })),
    );
    const skipped = tests.filter((test) => ["pending", "skipped", "todo", "disabled"].includes(test.status));
    const why = (skip) => allowed.find((entry) => entry.file === skip.file && entry.test === skip.test)?.why;
    const refused = skipped.filter((skip) => !why(skip));
    // An entry whose file ran but holds no such test any more (renamed, removed) allows nothing: the list is kept exact.
    const stale = allowed.filter((entry) => tests.some((t) => t.file === entry.file) && !tests.some((t) => t.file === entry.file && t.test === entry.test));
    const line = (skip) => `  ${skip.file}: ${skip.test}${why(skip) ? `\n      allowed: ${why(skip)}` : ""}`;
    if (skipped.length > 0) process.stdout.write(`\nSkipped tests (${skipped.length}):\n${skipped.map(line).join("\n")}\n`);
    if (process.env.GPU_RENTAL_REQUIRE_ALL !== "1" || refused.length + stale.length === 0) return;
    if (this.namePattern) {
      process.stdout.write("GPU_RENTAL_REQUIRE_ALL=1 with a test name pattern: the tests it leaves out count as skipped, so no skip is refused.\n");
      return;
    }
    const problems = [
      ...(refused.length ? [`${refused.length} test(s) skipped that test/allowed-skips.json does not allow (this machine lacks what they need; their names and the warnings above say what):`, ...refused.map((skip) => `  ${skip.file}: ${skip.test}`)] : []),
      ...(stale.length ? ["test/allowed-skips.json names tests that are not in their files (renamed or removed: update the list):", ...stale.map((entry) => `  ${entry.file}: ${entry.test}`)] : []),
    ];
    const message = `GPU_RENTAL_REQUIRE_ALL=1: ${problems.join("\n")}`;
    process.stdout.write(`\n${message}\n`);
    this.error = new Error(message);
  }

  getLastError() {
    return this.error;
  }
}
module.exports = SkipGate;
