const { availableParallelism } = require("node:os");

// ESM jest: MikroORM 7 and Agenda 6 ship ESM only (jest runs them through --experimental-vm-modules).
module.exports = {
  // jest's node environment, whose teardown waits for what a file closed to finish closing (see the file).
  testEnvironment: "<rootDir>/test/support/settling-environment.cjs",
  extensionsToTreatAsEsm: [".ts"],
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "<rootDir>/test/faults/"],
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  transform: { "^.+\\.ts$": ["ts-jest", { useESM: true, tsconfig: "tsconfig.json" }] },
  // Files with no timing on record are weighed with the parts they import (see the file).
  testSequencer: "<rootDir>/test/support/sequencer.cjs",
  globalSetup: "<rootDir>/test/global-setup.ts",
  globalTeardown: "<rootDir>/test/global-teardown.ts",
  testTimeout: 60000,
  // Two test files per core: a file spends most of its time waiting (on the service it started, a browser, timers),
  // about a third of it on CPU, so two per core keep the cores busy (docs/decisions/0234-two-test-files-per-core.md).
  maxWorkers: Math.min(8, 2 * availableParallelism()),
};
