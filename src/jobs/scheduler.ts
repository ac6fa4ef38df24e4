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

/** The part of Agenda 6's (private) job processor that arms a run's watchdog. */
interface JobProcessorInternals {
  runOrRetry(job: Job): Promise<void>;
}

/**
 * Agenda 6 arms a watchdog timer with every job run (`checkIfJobIsStillAlive`: a `delay` of the job's lock
 * lifetime / 2, 30 s for most jobs) and never clears it, so after stop() the last runs' watchdogs held the
 * process open for up to 30 s (a test runner that had finished hung; main.ts exits explicitly). The watchdog is
 * created synchronously inside the processor's `runOrRetry`: that call is wrapped so that the timers of exactly
 * the watchdog's length it creates are unref'd. A watchdog still fires while the process runs for other
 * reasons; it only no longer keeps a stopped process alive. Agenda is pinned (6.2.6): without the method (another
 * version) nothing is wrapped, and a test run that does not exit shows it.
 */
function unrefRunWatchdogs(agenda: Agenda, processEveryMs: number): void {
  // Private in Agenda's types: the processor exists from start() until stop().
  const processor = (agenda as unknown as { jobProcessor?: Partial<JobProcessorInternals> }).jobProcessor;
  const original = processor?.runOrRetry;
  if (processor === undefined || typeof original !== "function") return;
  processor.runOrRetry = function (this: JobProcessorInternals, job: Job): Promise<void> {
    const lockLifetime = agenda.definitions[job.attrs.name]?.lockLifetime ?? 0;
    const watchdogMs = Math.max(processEveryMs / 2, lockLifetime / 2);
    const real = globalThis.setTimeout;
    // Only for the synchronous part of the call (single-threaded: nothing else runs in between).
    globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...rest: unknown[]) => {
      const timer = real(fn, ms, ...rest);
      if (ms === watchdogMs) timer.unref();
      return timer;
    }) as typeof setTimeout;
    try {
      return original.call(this, job);
    } finally {
      globalThis.setTimeout = real;
    }
  };
}

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

  constructor(
    connectionString: string,
    private readonly opts: { logger: Logger; metrics: JobMetrics; poolSize: number },
  ) {
    this.pool = new pg.Pool({ connectionString, max: opts.poolSize });
    this.pool.on("error", (err) => opts.logger.warn({ err: err.message }, "job database connection error"));
    this.agenda = new Agenda({
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
   * Frees every job lock. Only for a database that belongs to this one process (the embedded one): any lock in it
   * was left by a process that died, and would otherwise hold its job (a monitor) for the lock's lifetime.
   */
  async releaseLeftLocks(): Promise<number> {
    const res = await this.pool.query(`update agenda_jobs set locked_at = null where locked_at is not null`);
    return res.rowCount ?? 0;
  }

  /** Start processing jobs (serve and worker roles). */
  async start(): Promise<void> {
    await this.agenda.start();
    unrefRunWatchdogs(this.agenda, PROCESS_EVERY_MS);
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

  async stop(): Promise<void> {
    await this.pause();
    await this.pool.end().catch(() => undefined);
  }

  private paused = false;
}
