/** @type {import('jest').Config} */
module.exports = {
  // Node's environment that also measures each file's CPU seconds, which the summary prints beside its wall time.
  testEnvironment: "<rootDir>/test/helpers/cpu-environment.js",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.test.json" }] },
  // The Pulumi end-to-end tests drive real engine processes: give them room.
  testTimeout: 120_000,
  // The package is packed once per run; the tests that install it elsewhere read GPU_RENTAL_TARBALL.
  globalSetup: "<rootDir>/test/helpers/global-setup.js",
  globalTeardown: "<rootDir>/test/helpers/global-teardown.js",
  // Three workers on 2 cores: engine runs wait much (process starts, polls); 736 s against 797 s with two.
  maxWorkers: 3,
  // Engine runs that a file starts side by side (it.concurrent): several at once overlap their waiting.
  maxConcurrency: 2,
  // The longest files first, also on a fresh clone (jest's own order would start them last).
  testSequencer: "<rootDir>/test/helpers/sequencer.js",
  // The skip gate lists every skip (and fails the run for one not allowed, under GPU_RENTAL_REQUIRE_ALL=1); the
  // summary prints the slowest files and the totals line last.
  reporters: ["default", "<rootDir>/test/helpers/skip-gate.js", "<rootDir>/test/helpers/summary-reporter.js"],
};
