// The faults suite (docs/faults.md): the service as child processes, one scenario file at a time.
const base = require("./jest.config.cjs");
module.exports = {
  ...base,
  testMatch: ["<rootDir>/test/faults/**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/"],
  globalSetup: "<rootDir>/test/faults/global-setup.ts",
  testTimeout: 900000,
  maxWorkers: 1,
};
