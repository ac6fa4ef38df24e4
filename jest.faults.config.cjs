// The faults suite (docs/faults.md): the service as child processes, one scenario file at a time.
const base = require("./jest.config.cjs");
module.exports = {
  ...base,
  testMatch: ["<rootDir>/test/faults/**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/"],
  globalSetup: "<rootDir>/test/faults/global-setup.ts",
  // Its own setup does not build: the sources run through ts-jest here, as before (the service's child processes run
  // dist/, which `.ci/run` builds with `npm test` first).
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  testTimeout: 900000,
  maxWorkers: 1,
};
