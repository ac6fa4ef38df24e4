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
const { appendFileSync, mkdirSync, readFileSync } = require("node:fs");
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

// Agenda 6 (pinned, 6.2.6) arms a watchdog with every job run (`checkIfJobIsStillAlive` in its JobProcessor: a
// `delay` of half the job's lock lifetime, 15 or 30 s here, re-armed while the run lasts) and never clears it: after
// stop(), the last watchdog holds the file's worker open for up to 30 s. The service exits explicitly (commands.ts); a
// test file ends without exiting, so here — in the test's own global, never in the service's code — a timer that
// Agenda's `delay` creates is unref'd: it still fires while the file runs, it only holds no stopped process open.
// Found by the stack at the timer's creation (the "delay" frame of Agenda's JobProcessor, named by its source map as
// src/JobProcessor.ts), looked at only for timers of 500 ms and more (the watchdog is never shorter).
const AGENDA_DELAY = /\bat delay \([^)]*[\\/]agenda[\\/](?:dist|src)[\\/]JobProcessor\.[jt]s:/;
const WATCHDOG_MIN_MS = 500;

function unrefAgendaWatchdogs(realSetTimeout) {
  const setTimeout = function (...args) {
    const timer = realSetTimeout.apply(this, args);
    if (typeof args[1] === "number" && args[1] >= WATCHDOG_MIN_MS && AGENDA_DELAY.test(new Error().stack ?? ""))
      timer.unref();
    return timer;
  };
  // util.promisify(setTimeout) and the like keep working: the wrapper carries the original's properties.
  Object.defineProperties(setTimeout, Object.getOwnPropertyDescriptors(realSetTimeout));
  return setTimeout;
}

// With TEST_CPU_LOG=<file>, each test file appends a line: its path, the CPU seconds its worker spent on it, its
// wall seconds and when it ended (seconds since the epoch, to lay a run out in time). The CPU counts the worker and
// every child it reaped while the file ran (the services and browsers a file starts and stops: a process's CPU joins
// its parent's when the parent waits for it), from /proc/self/stat in clock ticks; PostgreSQL's own server processes
// are not counted. docs/testing.md says how to read it.
const TICKS_PER_S = 100;

function cpuTicks() {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  // utime, stime, cutime, cstime: fields 14-17 of proc(5), 12-15 after the "pid (comm) " prefix is cut.
  return fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0);
}

class SettlingEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    this.rootDir = config.projectConfig.rootDir;
    this.global.setTimeout = unrefAgendaWatchdogs(this.global.setTimeout);
  }

  async setup() {
    if (process.env.TEST_CPU_LOG) this.started = { ticks: cpuTicks(), at: Date.now() };
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
    if (this.started) {
      const cpu = (cpuTicks() - this.started.ticks) / TICKS_PER_S;
      const wall = (Date.now() - this.started.at) / 1000;
      const file = this.testPath.slice(this.rootDir.length + 1);
      appendFileSync(
        process.env.TEST_CPU_LOG,
        `${file} ${cpu.toFixed(2)} ${wall.toFixed(1)} ${(Date.now() / 1000).toFixed(1)}\n`,
      );
    }
    if (open.length === 0) return;
    const dir = join(this.rootDir, "test", "artifacts");
    mkdirSync(dir, { recursive: true });
    const file = this.testPath.slice(this.rootDir.length + 1);
    appendFileSync(join(dir, "lingering-handles.log"), `${new Date().toISOString()} ${file}: ${open.join(", ")}\n`);
  }
}

module.exports = SettlingEnvironment;
