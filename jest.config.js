/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.test.json" }] },
  // The Pulumi end-to-end tests drive real engine processes: give them room, and keep workers few on 2 cores.
  testTimeout: 120_000,
  // The package is packed once per run; the tests that install it elsewhere read GPU_RENTAL_TARBALL.
  globalSetup: "<rootDir>/test/helpers/global-setup.js",
  globalTeardown: "<rootDir>/test/helpers/global-teardown.js",
  maxWorkers: 2,
  reporters: ["default", "<rootDir>/test/helpers/summary-reporter.js"],
};
