// ESM jest: MikroORM 7 and Agenda 6 ship ESM only (jest runs them through --experimental-vm-modules).
module.exports = {
  // jest's node environment, whose teardown waits for what a file closed to finish closing (see the file).
  testEnvironment: "<rootDir>/test/support/settling-environment.cjs",
  extensionsToTreatAsEsm: [".ts"],
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "<rootDir>/test/faults/"],
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  transform: { "^.+\\.ts$": ["ts-jest", { useESM: true, tsconfig: "tsconfig.json" }] },
  globalSetup: "<rootDir>/test/global-setup.ts",
  testTimeout: 60000,
  maxWorkers: 2,
};
