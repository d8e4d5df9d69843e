/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.ts$": ["ts-jest", { tsconfig: "tsconfig.test.json" }] },
  // The Pulumi end-to-end tests drive real engine processes: give them room, and keep workers few on 2 cores.
  testTimeout: 120_000,
  maxWorkers: 2,
  reporters: ["default", "<rootDir>/test/helpers/summary-reporter.js"],
};
