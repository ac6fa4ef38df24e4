import { AsyncLocalStorage } from "node:async_hooks";
import type { Agenda, Job } from "agenda";

/**
 * Agenda 6 arms a watchdog with every job run (`checkIfJobIsStillAlive` in its job processor: a `delay` of the
 * job's lock lifetime / 2, 15 or 30 s here, re-armed for as long as the run lasts) and never clears it, so a
 * stopped scheduler left the process alive for up to 30 s (main.ts exits explicitly; a test runner that had
 * finished hung until the last watchdog fired). Its timers are unref'd: a watchdog still fires while the
 * process runs for other reasons, it only no longer holds a stopped process open.
 *
 * The watchdog's timers are created by Agenda's own code inside the processor's `runOrRetry`, also in later
 * ticks of that call, and Agenda does not hand them out. So each `runOrRetry` call runs in an async context
 * that carries its watchdog's length, and `setTimeout` unrefs the timers of exactly that length created in
 * that context. The job's own code runs outside it (`outsideWatchdogs`), so none of its timers is touched.
 * Agenda is pinned (6.2.6): without `runOrRetry` (another version) nothing is wrapped, and a test run that does
 * not exit shows it.
 */
const watchdogMs = new AsyncLocalStorage<number>();

let installed = false;

/** `setTimeout`, but a timer of the current run's watchdog length, created in Agenda's run context, is unref'd. */
function installSetTimeout(): void {
  if (installed) return;
  installed = true;
  const real = globalThis.setTimeout;
  const wrapped = function (this: unknown, ...args: Parameters<typeof setTimeout>) {
    const timer = real.apply(this, args);
    const ms = watchdogMs.getStore();
    if (ms !== undefined && args[1] === ms) timer.unref();
    return timer;
  };
  // util.promisify(setTimeout) and the like keep working: the wrapper carries the original's properties.
  Object.defineProperties(wrapped, Object.getOwnPropertyDescriptors(real));
  globalThis.setTimeout = wrapped as typeof setTimeout;
}

/** Wraps the job processor that `agenda.start()` created (call after each start). */
export function unrefRunWatchdogs(agenda: Agenda, processEveryMs: number): void {
  // Private in Agenda's types: the processor exists from start() until stop().
  const processor = (agenda as unknown as { jobProcessor?: { runOrRetry?: (job: Job) => Promise<void> } }).jobProcessor;
  const original = processor?.runOrRetry;
  if (processor === undefined || typeof original !== "function") return;
  installSetTimeout();
  processor.runOrRetry = function (this: unknown, job: Job): Promise<void> {
    const lockLifetime = agenda.definitions[job.attrs.name]?.lockLifetime ?? 0;
    return watchdogMs.run(Math.max(processEveryMs / 2, lockLifetime / 2), () => original.call(this, job));
  };
}

/** Runs a job's own code outside the watchdog's context. */
export function outsideWatchdogs<T>(fn: () => T): T {
  return watchdogMs.exit(fn);
}
