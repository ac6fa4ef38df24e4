import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { EmbeddedServer } from "../../src/db/embedded-server.js";
import { copyDemoTemplate } from "../support/demo-template.js";
import { createTestDatabase } from "../support/db.js";
import { waitFor } from "../support/wait.js";
import { createLogger } from "../../src/logger.js";
import { Scheduler } from "../../src/jobs/scheduler.js";

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;

/**
 * Agenda 6 leaves a watchdog timer of half the job's lock lifetime (30 s for a 60 s lock) behind every run, and the
 * service does not patch timers to hide it: commands.ts exits explicitly, and the test environment unrefs exactly that
 * timer (test/support/settling-environment.cjs). What it is for: a file whose scheduler ran jobs ends as soon as it
 * stopped, instead of holding its jest worker open until the last watchdog fires.
 */
describe("a stopped scheduler holds no process open", () => {
  let url: string;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ url, drop } = await createTestDatabase());
  });
  afterAll(async () => drop?.());

  it("leaves no timer of Agenda's ref'd once stopped, though its watchdog of the run is still armed", async () => {
    const before = timers();
    const scheduler = quietScheduler(url);
    let ran!: () => void;
    const done = new Promise<void>((resolve) => (ran = resolve));
    scheduler.define({ name: "probe", lockLifetimeMs: 60_000, run: async () => ran() });
    await scheduler.ready();
    await scheduler.start();
    await scheduler.now("probe", {});
    await done;
    const started = Date.now();
    await scheduler.stop();
    // The watchdog fires 30 s after the run began; everything else the scheduler held is gone within a moment.
    await waitFor(() => timers() <= before, 5_000);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 30_000);
});

/**
 * A run keeps its job's lock until it ends and Agenda releases the lock through the scheduler's pool. stop() used to
 * close that pool under a run still going, so the lock stayed: every other process sharing the database skipped
 * the job for the rest of the lock's lifetime (a monitor: no payment followed for up to a minute after each clean
 * restart of one instance; on the embedded database, the next start's "released job locks left by a process").
 * On the machine's PostgreSQL and on the embedded engine, as `npm start` runs it.
 */
describe.each(["PostgreSQL", "the embedded engine"])("a clean stop on %s", (engine) => {
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    if (engine === "PostgreSQL") {
      const db = await createTestDatabase();
      url = db.url;
      close = db.drop;
      return;
    }
    // The embedded database of a demo that has started once (the run's copy): opening it costs a fraction of an
    // empty one's initdb. Its own jobs are not defined here, so they do not run.
    const dir = mkdtempSync(join(tmpdir(), "pqr-stop-"));
    const db = (await copyDemoTemplate(join(dir, "data")))
      ? await PGlite.create(join(dir, "data", "pglite"))
      : await PGlite.create();
    const server = new EmbeddedServer(db, { password: "s3cret" });
    await server.listen(join(dir, ".s.PGSQL.5432"));
    url = `postgresql://postgres:s3cret@${encodeURIComponent(dir)}:5432/postgres`;
    close = async () => {
      await server.stop();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    };
  }, 60_000);
  afterAll(async () => close?.());

  const lockedJobs = async () =>
    (
      await sql<{ name: string }>(
        url,
        `select name from agenda_jobs where locked_at is not null and name = any($1) order by name`,
        [["monitor", "stuck"]],
      )
    ).map((r) => r.name);

  /** A scheduler whose recurring job `name` runs until `finish` is called; resolves once a run has begun. */
  async function runningScheduler(name: string, stopWaitMs?: number) {
    const warnings: Record<string, unknown>[] = [];
    const logger = createLogger(
      { logLevel: "warn" },
      { write: (line: string) => void warnings.push(JSON.parse(line)) },
    );
    const metrics = { jobLag: { set: () => undefined }, jobRuns: { inc: () => undefined } };
    const scheduler = new Scheduler(url, { logger, metrics, poolSize: 2, stopWaitMs });
    let began!: () => void;
    const running = new Promise<void>((resolve) => (began = resolve));
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    scheduler.define({
      name,
      every: "1 second",
      lockLifetimeMs: 60_000,
      run: async () => {
        began();
        await finished;
      },
    });
    await scheduler.ready();
    await scheduler.start();
    await running;
    expect(await lockedJobs()).toContain(name);
    return { scheduler, finish, warnings };
  }

  it("waits for the run still going, so its lock is released and another process may run the job at once", async () => {
    const { scheduler, finish } = await runningScheduler("monitor");
    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(stopped).toBe(false);
    } finally {
      finish();
      await stopping;
    }
    expect(await lockedJobs()).toEqual([]);
    // The next process runs the job within a few seconds, not after the 60 s lock's lifetime.
    const started = Date.now();
    const next = await runningScheduler("monitor");
    expect(Date.now() - started).toBeLessThan(10_000);
    next.finish();
    await next.scheduler.stop();
  }, 60_000);

  it("stops after stopWaitMs whatever a run does, and says which runs keep their locks", async () => {
    const { scheduler, finish, warnings } = await runningScheduler("stuck", 500);
    try {
      const started = Date.now();
      await scheduler.stop();
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(warnings).toEqual([
        expect.objectContaining({
          msg: "job runs still going at stop keep their locks until the locks lapse",
          jobs: ["stuck"],
        }),
      ]);
      expect(await lockedJobs()).toEqual(["stuck"]);
    } finally {
      finish();
      await sql(url, `update agenda_jobs set locked_at = null where name = 'stuck'`, []);
    }
  }, 60_000);
});

/**
 * Agenda's stop() releases the jobs it has locked, but not one whose lock statement is still on its way: that lock
 * lands after stop() and its job is never run, so the lock stayed (on the embedded database, the next start's
 * "released job locks left by a process … jobs=1"; on PostgreSQL, every other worker skipped the job for 60 s). Here
 * the lock statement is held on its way by a lock on Agenda's table, taken between two runs of a recurring job.
 * PostgreSQL only: the embedded engine runs one statement at a time, so a statement waiting on a lock would hold it.
 */
describe("a clean stop while the scheduler is taking a lock", () => {
  let url: string;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ url, drop } = await createTestDatabase());
  });
  afterAll(async () => drop?.());

  it("releases the lock that lands after stop(), so the next process runs the job at once", async () => {
    const scheduler = quietScheduler(url);
    let runs = 0;
    scheduler.define({ name: "tick", every: "1 second", lockLifetimeMs: 60_000, run: async () => void runs++ });
    await scheduler.ready();
    await scheduler.start();
    await waitFor(() => runs >= 1, 10_000, 20, "the first run");
    // The next scan's lock statement waits on the table's lock.
    await stopWhileHeld(
      url,
      scheduler,
      "lock table agenda_jobs in share row exclusive mode",
      "SET locked_at = $1, last_modified_by",
    );
    const locked = await sql<{ name: string }>(url, `select name from agenda_jobs where locked_at is not null`, []);
    expect(locked).toEqual([]);
    // The next process runs the job within seconds, not after the 60 s lock's lifetime.
    const next = quietScheduler(url);
    let nextRuns = 0;
    next.define({ name: "tick", every: "1 second", lockLifetimeMs: 60_000, run: async () => void nextRuns++ });
    await next.ready();
    await next.start();
    try {
      await waitFor(() => nextRuns >= 1, 10_000, 20, "a run by the next process");
    } finally {
      await next.stop();
    }
  }, 60_000);

  it("waits for a run Agenda began just before it stopped, whose first write was still on its way", async () => {
    const scheduler = quietScheduler(url);
    let ended = 0;
    scheduler.define({
      name: "later",
      lockLifetimeMs: 60_000,
      run: async () => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        ended++;
      },
    });
    await scheduler.ready();
    await scheduler.now("later", {});
    // Due in 1.9 s: a scan locks it up to a second ahead, and a timer of Agenda's begins the run at its time.
    await sql(
      url,
      `update agenda_jobs set next_run_at = now() + interval '1900 milliseconds' where name = 'later'`,
      [],
    );
    await scheduler.start();
    const lockedLater = async () =>
      (await sql(url, `select 1 from agenda_jobs where name = 'later' and locked_at is not null`, [])).length === 1;
    await waitFor(lockedLater, 10_000, 20, "the job locked ahead of its time");
    // At its time the run begins, and its first write (the run's start) waits on the row.
    await stopWhileHeld(
      url,
      scheduler,
      "select 1 from agenda_jobs where name = 'later' for update",
      "SET locked_at = $2,",
    );
    expect(ended).toBe(1);
    expect(await sql(url, `select name from agenda_jobs where locked_at is not null`, [])).toEqual([]);
  }, 60_000);
});

/** A scheduler that logs nothing and records no metrics. */
function quietScheduler(url: string): Scheduler {
  const metrics = { jobLag: { set: () => undefined }, jobRuns: { inc: () => undefined } };
  return new Scheduler(url, { logger: createLogger({ logLevel: "silent" }), metrics, poolSize: 2 });
}

/**
 * Holds a lock on Agenda's table (`hold`, in a transaction of its own) until a statement of the scheduler's whose
 * text contains `waiting` waits on it; calls stop(), lets the statement go 300 ms later, and waits for the stop.
 */
async function stopWhileHeld(url: string, scheduler: Scheduler, hold: string, waiting: string): Promise<void> {
  const blocker = new pg.Client({ connectionString: url });
  await blocker.connect();
  let stopping: Promise<void> | undefined;
  try {
    await blocker.query("begin");
    await blocker.query(hold);
    const waits = async () =>
      (
        await sql<{ n: number }>(
          url,
          `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and position($1 in query) > 0`,
          [waiting],
        )
      )[0]?.n === 1;
    await waitFor(waits, 10_000, 20, `a statement with "${waiting}" waiting`);
    stopping = scheduler.stop();
    await new Promise((resolve) => setTimeout(resolve, 300));
  } finally {
    await blocker.query("commit");
    await blocker.end();
  }
  await stopping;
}

/** One statement on its own connection (the test's view of the database the scheduler uses). */
async function sql<R extends object>(url: string, text: string, params: unknown[]): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(text, params)).rows;
  } finally {
    await c.end();
  }
}
