// The test environment of `npm test`: jest's node environment, whose teardown waits (at most 2 s) until what the
// test file opened and closed has finished closing — sockets still shutting, servers, child processes, timers,
// file requests — so the next file in the worker starts clean. What is still open after 2 s is written to
// test/artifacts/lingering-handles.log with the file's name: a leak to find, not to wait for.
// Why: jest ends a worker 500 ms after its last file and prints "A worker process has failed to exit gracefully"
// when the worker is still busy. The one file this log named (test/rest/openapi.test.ts) and the service processes'
// readiness poll both read statuses off response bodies left unread, which hold their sockets; they read their
// bodies now (test/support/http.ts statusOf). Jest's line is not gone: every full run on a slower machine printed it
// once (exit code 0) while this log named nothing, so what holds that worker is outside what a file opens.
const { TestEnvironment } = require("jest-environment-node");
const { appendFileSync, mkdirSync } = require("node:fs");
const { join } = require("node:path");

const SETTLE_MS = 2000;
// A worker's own stdio pipes are created the first time something touches them and stay for its life.
const IGNORED = new Set(["PipeWrap"]);

function counts() {
  const c = new Map();
  for (const kind of process.getActiveResourcesInfo()) if (!IGNORED.has(kind)) c.set(kind, (c.get(kind) ?? 0) + 1);
  return c;
}

function beyond(before, now) {
  return [...now]
    .filter(([kind, n]) => n > (before.get(kind) ?? 0))
    .map(([kind, n]) => `${kind} +${n - (before.get(kind) ?? 0)}`);
}

class SettlingEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    this.rootDir = config.projectConfig.rootDir;
  }

  async setup() {
    this.before = counts();
    await super.setup();
  }

  async teardown() {
    await super.teardown();
    const until = Date.now() + SETTLE_MS;
    let open = beyond(this.before, counts());
    while (open.length > 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      open = beyond(this.before, counts());
    }
    if (open.length === 0) return;
    const dir = join(this.rootDir, "test", "artifacts");
    mkdirSync(dir, { recursive: true });
    const file = this.testPath.slice(this.rootDir.length + 1);
    appendFileSync(join(dir, "lingering-handles.log"), `${new Date().toISOString()} ${file}: ${open.join(", ")}\n`);
  }
}

module.exports = SettlingEnvironment;
