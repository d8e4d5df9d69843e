const Sequencer = require("@jest/test-sequencer").default;
const path = require("node:path");

/**
 * The files that take longest (measured; engine work and installs), longest first. Jest starts the files it has
 * timed before longest first, but a fresh clone has no timings, and jest's stand-in, the file's size, would
 * start these short files last and leave one worker running them alone at the end. Paths from the repository
 * root; files not listed follow in jest's own order.
 */
const LONGEST_FIRST = [
  "test/compat/schemathesis.test.ts",
  "test/languages/python.test.ts",
  "test/languages/go.test.ts",
  "test/package/rate-limits.test.ts",
  "test/package/examples.test.ts",
  "test/package/linked.test.ts",
  "test/package/gpu-fleet.test.ts",
  "test/package/readme.test.ts",
  "test/docs/spend-guard.test.ts",
  "test/languages/yaml.test.ts",
  "test/languages/python-npm.test.ts",
  "test/plugin/release.test.ts",
  "test/package/interrupted.test.ts",
  "test/package/ci.test.ts",
  "test/plugin/typescript.test.ts",
  "test/e2e/spend-guard.test.ts",
  "test/emulator/lock.test.ts",
  "test/e2e/pulumi.test.ts",
  "test/sdk/rentals-under-load.test.ts",
  "test/package/own-program-js.test.ts",
  "test/package/own-program-ts.test.ts",
  "test/emulator/durability.test.ts",
  "test/e2e/resources.test.ts",
  "test/package/accounts.test.ts",
  "test/compat/vastai.test.ts",
  "test/package/adopt.test.ts",
  "test/sdk/watchdog.test.ts",
  "test/package/unstable.test.ts",
  "test/tools/language-hosts.test.ts",
  "test/emulator/memory.test.ts",
  "test/languages/program-test.test.ts",
  "test/package/many-instances.test.ts",
];

class LongestFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    // Timings from an earlier run on this machine know better than the list.
    if (sorted.some((test) => test.duration != null)) return sorted;
    const rank = (test) => {
      const index = LONGEST_FIRST.indexOf(path.relative(path.resolve(__dirname, "..", ".."), test.path));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    return sorted.map((test, order) => ({ test, order })).sort((a, b) => rank(a.test) - rank(b.test) || a.order - b.order).map(({ test }) => test);
  }
}
module.exports = LongestFirst;
