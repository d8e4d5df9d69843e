/**
 * The fast project: the SDK, the emulator and the conformance tests that run in this process against an in-process
 * emulator, with no engine, toolchain, package or Python environment to prepare: `npx jest --selectProjects fast`
 * runs them in seconds. The files of those folders that wait on real processes or real time are the engine's.
 */
const FAST_DIRS = ["sdk", "emulator", "conformance", "suite", "docs"];
/** The files of those folders that are the engine project's, by folder. */
const SLOW = { sdk: ["rentals-under-load", "watchdog"], emulator: ["durability", "lock", "memory"], docs: ["spend-guard"] };
const slowOf = (dir) => SLOW[dir] ?? [];
/** Paths (regular expressions) of a folder's fast files, and of its slow ones. */
const fastIn = (dir) => `<rootDir>/test/${dir}/${slowOf(dir).length ? `(?!(?:${slowOf(dir).join("|")})\\.test\\.ts$)` : ""}`;
const slowIn = (dir) => slowOf(dir).map((name) => `<rootDir>/test/${dir}/${name}\\.test\\.ts$`);

const common = {
  // Node's environment that also measures each file's CPU seconds, which the summary prints beside its wall time.
  testEnvironment: "<rootDir>/test/helpers/cpu-environment.js",
  roots: ["<rootDir>/test"],
  transform: { "^.+\\.ts$": "<rootDir>/test/helpers/transform.js" },
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    { ...common, displayName: "fast", testMatch: FAST_DIRS.map((dir) => `<rootDir>/test/${dir}/**/*.test.ts`), testPathIgnorePatterns: FAST_DIRS.flatMap(slowIn) },
    {
      ...common,
      // Everything else: the real engine, the packed package installed elsewhere, Python clients, processes.
      displayName: "engine",
      testMatch: ["<rootDir>/test/**/*.test.ts"],
      testPathIgnorePatterns: FAST_DIRS.map(fastIn),
      // The package is packed once per run (GPU_RENTAL_TARBALL) and the toolchain prepared, for this project only.
      globalSetup: "<rootDir>/test/helpers/global-setup.js",
      globalTeardown: "<rootDir>/test/helpers/global-teardown.js",
    },
  ],
  // The Pulumi end-to-end tests drive real engine processes: give them room.
  testTimeout: 120_000,
  // More workers than cores: engine runs wait much (process starts, polls, boots). The runs that chose the number
  // are in docs/testing.md ("Side by side").
  maxWorkers: 4,
  // Engine runs that a file starts side by side (it.concurrent): several at once overlap their waiting.
  maxConcurrency: 2,
  // The longest files first, also on a fresh clone (jest's own order would start them last).
  testSequencer: "<rootDir>/test/helpers/sequencer.js",
  // The skip gate lists every skip (and fails the run for one not allowed, under GPU_RENTAL_REQUIRE_ALL=1); the
  // summary prints the slowest files and the totals line last.
  reporters: ["default", "<rootDir>/test/helpers/skip-gate.js", "<rootDir>/test/helpers/summary-reporter.js"],
};
