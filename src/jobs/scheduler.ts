import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { Agenda, type Job } from "agenda";
import { PostgresBackend } from "@agendajs/postgres-backend";
import pg from "pg";
import type { Logger } from "../logger.js";

export interface JobSpec<T extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  run(data: T, job: Job<T>): Promise<void>;
  concurrency?: number;
  lockLifetimeMs?: number;
  /** For recurring jobs: how often. */
  every?: string;
}

/** What the scheduler records (ops/metrics.ts provides it). */
export interface JobMetrics {
  jobLag: { set(labels: { job: string }, seconds: number): void };
  jobRuns: { inc(labels: { job: string; outcome: string }): void };
}

const PROCESS_EVERY_MS = 1000;
/**
 * How long stop() waits for runs still going: well inside commands.ts's 30 s forced exit, and longer than an upstream
 * call's or a webhook delivery's own timeout, so a run that is only waiting on one ends and releases its lock.
 */
const STOP_WAIT_MS = 15_000;

/**
 * Agenda 6 on the same PostgreSQL (or embedded) database. Monitoring and delivery are recurring jobs that
 * claim due rows with SKIP LOCKED, so any number of workers share the load; Agenda's locks keep one run
 * of each recurring job at a time and hand over a crashed worker's job after its lock lifetime.
 */
export class Scheduler {
  private readonly agenda: Agenda;
  /** Our own pool, so errors on idle connections are handled and stop() really closes it. */
  private readonly pool: pg.Pool;
  private readonly specs: JobSpec[] = [];
  private started = false;
  /** Runs started and not yet complete (stop() waits for them). */
  private readonly runs = new Set<Job>();
  private onRunsEnded: (() => void) | null = null;
  /** This scheduler's name: Agenda writes it into every lock it takes (`last_modified_by`), so stop() finds them. */
  private readonly name = `${hostname()}:${process.pid}:${randomUUID()}`;

  constructor(
    connectionString: string,
    private readonly opts: { logger: Logger; metrics: JobMetrics; poolSize: number; stopWaitMs?: number },
  ) {
    this.pool = new pg.Pool({ connectionString, max: opts.poolSize });
    this.pool.on("error", (err) => opts.logger.warn({ err: err.message }, "job database connection error"));
    this.agenda = new Agenda({
      name: this.name,
      // Notifications off: polling every second is fast enough (this process kicks its own work directly), and
      // the notification channel has no error handler, so a dropped LISTEN connection would crash the process.
      backend: new PostgresBackend({ pool: this.pool, disableNotifications: true }),
      processEvery: PROCESS_EVERY_MS,
      defaultConcurrency: 4,
      // Every job type has its own concurrency (link monitors: LINK_MAX_MONITORS); this is only a backstop above their sum.
      maxConcurrency: 2_000,
      defaultLockLifetime: 60_000,
      removeOnComplete: true,
    });
    this.agenda.on("error", (err: Error) => opts.logger.error({ err }, "scheduler error"));
    this.agenda.on("start", (job: Job) => {
      const due = job.attrs.nextRunAt?.getTime();
      if (due !== undefined) opts.metrics.jobLag.set({ job: job.attrs.name }, Math.max(0, (Date.now() - due) / 1000));
      this.runs.add(job);
    });
    // Agenda says `complete` once the run's lock is released in the database (or releasing it failed).
    this.agenda.on("complete", (job: Job) => {
      this.runs.delete(job);
      if (this.runs.size === 0) this.onRunsEnded?.();
    });
    this.agenda.on("success", (job: Job) => opts.metrics.jobRuns.inc({ job: job.attrs.name, outcome: "success" }));
    this.agenda.on("fail", (err: Error, job: Job) => {
      opts.metrics.jobRuns.inc({ job: job.attrs.name, outcome: "fail" });
      opts.logger.warn({ err, job: job.attrs.name }, "job failed");
    });
  }

  define<T extends Record<string, unknown>>(spec: JobSpec<T>): void {
    this.agenda.define<T>(spec.name, async (job) => spec.run(job.attrs.data, job), {
      concurrency: spec.concurrency ?? 1,
      lockLifetime: spec.lockLifetimeMs ?? 60_000,
    });
    this.specs.push(spec as unknown as JobSpec);
  }

  /** Connected, with Agenda's table in place. */
  async ready(): Promise<void> {
    await this.agenda.ready;
  }

  /**
   * Frees every job lock, and names the jobs it freed. Only for a database that belongs to this one process (the
   * embedded one): any lock in it was left by a process that died, and would otherwise hold its job (a monitor) for
   * the lock's lifetime.
   */
  async releaseLeftLocks(): Promise<string[]> {
    const res = await this.pool.query<{ name: string }>(
      `update agenda_jobs set locked_at = null where locked_at is not null returning name`,
    );
    return res.rows.map((r) => r.name).sort();
  }

  /** Start processing jobs (serve and worker roles). */
  async start(): Promise<void> {
    await this.agenda.start();
    for (const spec of this.specs)
      if (spec.every) await this.agenda.every(spec.every, spec.name, {}, { skipImmediate: false });
    this.started = true;
  }

  /** Enqueue a one-off job now (e.g. one browser monitor per transaction); works without processing (api role). */
  async now<T extends Record<string, unknown>>(name: string, data: T): Promise<void> {
    await this.agenda.ready;
    await this.agenda.now(name, data);
  }

  get running(): boolean {
    return this.started;
  }

  /**
   * Takes no more jobs (jobs locked but not started are released); running jobs go on, and jobs can still be
   * enqueued (the connection stays open until stop()).
   */
  async pause(): Promise<void> {
    if (this.started) {
      this.started = false;
      await this.agenda
        .stop(false)
        .catch((err: Error) => this.opts.logger.warn({ err: err.message }, "scheduler stop failed"));
    } else if (!this.paused) {
      await this.agenda.ready.catch(() => undefined);
      await this.agenda.stop(false).catch(() => undefined);
    }
    this.paused = true;
  }

  /**
   * Takes no more jobs, waits for the runs still going to end (at most `stopWaitMs`), then closes the connections.
   * A run keeps its job's lock until it ends and Agenda releases it through this pool: closing the pool under it
   * left the lock, and every other process sharing the database then skipped that job for the rest of the lock's
   * lifetime (a monitor: no payment followed for up to a minute after each clean restart of one instance).
   */
  async stop(): Promise<void> {
    const waitMs = this.opts.stopWaitMs ?? STOP_WAIT_MS;
    await this.pause();
    await this.settle(Date.now() + waitMs).catch((err: Error) =>
      this.opts.logger.warn({ err: err.message }, "releasing this process's job locks failed"),
    );
    if (this.runs.size > 0)
      this.opts.logger.warn(
        { jobs: [...this.runs].map((job) => job.attrs.name), waitedMs: waitMs },
        "job runs still going at stop keep their locks until the locks lapse",
      );
    await this.pool.end().catch(() => undefined);
  }

  /**
   * Until `until`: waits for the runs still going and for this scheduler's statements in flight, then releases the
   * locks that carry this scheduler's name, and again until a round releases none. Agenda's stop() leaves three kinds
   * of lock behind: a run's (released when it ends, through this pool), one whose lock statement is still on its way,
   * and those its queue filling goes on to take (it locks the next due job of a kind until none is left, and never
   * runs them once stopped). A run Agenda began just before it stopped says `start` only once its first write is
   * back, so runs are waited for again after the statements. A run still going at `until` keeps its lock.
   */
  private async settle(until: number): Promise<void> {
    for (;;) {
      await this.runsEnded(until);
      while (this.pool.totalCount > this.pool.idleCount || this.pool.waitingCount > 0) {
        if (Date.now() >= until) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      if (this.runs.size > 0) {
        if (Date.now() >= until) return;
        continue;
      }
      const released = await this.pool.query(
        `update agenda_jobs set locked_at = null where locked_at is not null and last_modified_by = $1`,
        [this.name],
      );
      if ((released.rowCount ?? 0) === 0 || Date.now() >= until) return;
    }
  }

  /** Resolves when no run is going, or at `until`. */
  private async runsEnded(until: number): Promise<void> {
    if (this.runs.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => (this.onRunsEnded = resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, until - Date.now())))),
    ]);
    clearTimeout(timer);
    this.onRunsEnded = null;
  }

  private paused = false;
}
