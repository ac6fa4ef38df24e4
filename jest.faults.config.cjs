const base = require("./jest.config.cjs");
module.exports = { ...base, testMatch: ["<rootDir>/test/faults/**/*.test.ts"], testPathIgnorePatterns: ["/node_modules/"], testTimeout: 900000, maxWorkers: 1 };
