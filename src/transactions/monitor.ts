import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { JobSpec } from "../jobs/scheduler.js";
import { claimDue, claimLate, scheduleLate, scheduleNext } from "./claim.js";
import type { TxRecord } from "./record.js";
import type { Area } from "./transaction.entity.js";
import type { ExpiryPolicy, TransactionStore, TransitionRequest } from "./transition.js";

/** What an area's upstream said of one transaction. */
export type CheckOutcome =
  /** A change to record: an outcome (SUCCESS, FAILED) or a visible change that keeps the status. */
  | { kind: "transition"; change: Omit<TransitionRequest, "id"> }
  /** The upstream answered: nothing new (`recheckMs`: look again after this long instead of the interval). */
  | { kind: "unchanged"; recheckMs?: number }
  /**
   * The upstream could not answer for it: back off; a fault never ends a transaction. `quiet`: the area already told
   * the operator once (a refused token, a 429 pause), so no warning line per batch for it.
   */
  | { kind: "fault"; error: string; quiet?: boolean };

/**
 * An area's upstream as the monitor loop sees it: asked about live (unexpired) transactions, in one call
 * per claimed batch. A throw is a fault for every transaction of the batch; a transaction missing from
 * the answer is unchanged.
 */
export interface MonitorPort {
  check(txs: TxRecord[]): Promise<Map<string, CheckOutcome>>;
  /**
   * How many transactions this port can check within `leaseMs` now, when it is fewer than a batch (a paced
   * upstream): a round claims no more, so no claim's lease runs out while its checks still wait their turn.
   */
  batchLimit?(leaseMs: number): number;
}

export interface MonitorSpec {
  name: string;
  area: Area;
  /** How often the job runs (default every second); each transaction is checked every `recheckMs`. */
  every?: string;
  /** When an unchanged transaction is looked at again (never later than its expiry). */
  recheckMs: number;
  /** Transactions claimed per round; a full batch runs another round, up to `rounds`. */
  batch: number;
  rounds?: number;
  /** Agenda lock of the recurring job (how soon another worker takes over from a dead one); 60 s by default. */
  lockLifetimeMs?: number;
  /** Null: no upstream to ask (the transactions are followed elsewhere); the loop only ends the expired ones. */
  port: MonitorPort | null;
}

export interface MonitorDeps {
  clock: Clock;
  db: Db;
  store: TransactionStore;
  logger: Logger;
}

/** Transitions of one checked batch handed to the store at once (it groups them into shared database transactions). */
const TRANSITIONS_IN_FLIGHT = 64;

async function inParallel(tasks: (() => Promise<unknown>)[], width: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, lane));
}

/** Wait after the n-th consecutive fault: doubling from the recheck interval, at most 60 s. */
export function faultBackoffMs(recheckMs: number, failures: number): number {
  return Math.min(recheckMs * 2 ** Math.min(failures, 6), 60_000);
}

/**
 * The one monitor loop of the three areas: claim the due transactions (SKIP LOCKED, the claim sets their
 * next check), end the expired ones, ask the area's upstream about the rest, and record what it said
 * through the one transition function. Faults back off per transaction; a transaction that answers
 * again after faults has its count reset.
 */
export function monitorJob(deps: MonitorDeps, spec: MonitorSpec): JobSpec {
  const loop = new MonitorLoop(deps, spec);
  return {
    name: spec.name,
    every: spec.every ?? "1 second",
    lockLifetimeMs: spec.lockLifetimeMs ?? 60_000,
    run: () => loop.run(),
  };
}

/** One area's monitor loop: a run of the job is `run()`. */
class MonitorLoop {
  /**
   * The job runs every second and claims what is due, and a checked transaction falls due again a little
   * before its interval is up: with the job's runs a second apart (each starting a few ms early or late), it is
   * then looked at every interval, never one run later (pay → SUCCESS up to interval + 1 s; a job run every
   * interval instead missed about half the transactions by a few ms and left them a whole interval more:
   * p99 over two intervals, measured with bench/lifecycle.ts).
   */
  private readonly leaseMs: number;

  constructor(
    private readonly deps: MonitorDeps,
    private readonly spec: MonitorSpec,
  ) {
    this.leaseMs = spec.recheckMs - Math.min(250, Math.floor(spec.recheckMs / 4));
  }

  async run(): Promise<void> {
    const { clock, db, store } = this.deps;
    const spec = this.spec;
    const policy = spec.port === null ? null : store.expiryPolicy(spec.area);
    const graceMs = policy?.graceMs ?? 0;
    for (let round = 0; round < (spec.rounds ?? 1); round++) {
      const now = clock.now();
      const batch = Math.max(1, Math.min(spec.batch, spec.port?.batchLimit?.(this.leaseMs) ?? spec.batch));
      const claimed = await claimDue(db, spec.area, now, new Date(now.getTime() + this.leaseMs), batch, {
        nextCheck: true,
        graceMs,
      });
      if (claimed.length === 0) break;
      const live: TxRecord[] = [];
      for (const tx of claimed) {
        // Past its expiry (and its grace, if the area has one) a transaction expires without a check.
        if (tx.expiresAt.getTime() + graceMs <= now.getTime()) await this.expire(tx);
        else live.push(tx);
      }
      if (live.length > 0 && spec.port !== null) await this.record(live, await this.ask(spec.port, live), now, graceMs);
      if (claimed.length < batch) break;
    }
    if (policy !== null && policy.lateWatchMs > 0 && spec.port !== null) await this.lateWatch(spec.port, policy);
  }

  private async expire(tx: TxRecord): Promise<void> {
    const nextCheckAt = this.deps.store.lateWatchNext(tx.area, this.deps.clock.now());
    await this.deps.store.transition({ id: tx.id, to: "EXPIRED", event: "payment.expired", nextCheckAt });
  }

  private async ask(port: MonitorPort, live: TxRecord[]): Promise<Map<string, CheckOutcome>> {
    try {
      return await port.check(live);
    } catch (err) {
      const fault: CheckOutcome = { kind: "fault", error: (err as Error).message };
      return new Map(live.map((tx) => [tx.id, fault]));
    }
  }

  private async record(
    live: TxRecord[],
    outcomes: Map<string, CheckOutcome>,
    claimedAt: Date,
    graceMs: number,
  ): Promise<void> {
    const { clock, db, store, logger } = this.deps;
    const spec = this.spec;
    const recovered: string[] = [];
    const backoff = new Map<number, string[]>();
    const later = new Map<number, string[]>();
    let lastError = "";
    let loud = 0;
    const changes: (() => Promise<unknown>)[] = [];
    for (const tx of live) {
      const o: CheckOutcome = outcomes.get(tx.id) ?? { kind: "unchanged" };
      if (o.kind === "fault") {
        const wait = faultBackoffMs(spec.recheckMs, tx.checkFailures + 1);
        backoff.set(wait, [...(backoff.get(wait) ?? []), tx.id]);
        if (!o.quiet) {
          lastError = o.error;
          loud++;
        }
        continue;
      }
      if (o.kind === "unchanged" && o.recheckMs !== undefined && tx.expiresAt.getTime() > claimedAt.getTime()) {
        later.set(o.recheckMs, [...(later.get(o.recheckMs) ?? []), tx.id]);
        continue;
      }
      if (o.kind === "transition") changes.push(() => store.transition({ id: tx.id, ...o.change }));
      // A check at or after its expiry answered and said nothing was paid: now it is expired.
      else if (tx.expiresAt.getTime() <= claimedAt.getTime()) changes.push(() => this.expire(tx));
      // Only one that had been backing off needs its failure count reset (and its next check from now).
      else if (tx.checkFailures > 0) recovered.push(tx.id);
    }
    // Handed over together: the store commits concurrent transitions in shared database transactions.
    await inParallel(changes, TRANSITIONS_IN_FLIGHT);
    const now = clock.now();
    const grace = { now, graceMs };
    for (const [wait, ids] of backoff) await scheduleNext(db, ids, new Date(now.getTime() + wait), true, grace);
    if (loud > 0) {
      logger.warn(
        { monitor: spec.name, err: lastError, count: loud, backoffMs: Math.max(...backoff.keys()) },
        `${spec.name}: upstream check failed; backing off`,
      );
    }
    await scheduleNext(db, recovered, new Date(now.getTime() + this.leaseMs), false, grace);
    for (const [wait, ids] of later) await scheduleNext(db, ids, new Date(now.getTime() + wait), false, grace);
  }

  /**
   * The late watch: expired transactions are checked every `lateCheckMs` until `lateWatchMs` after their
   * expiry. A payment found then is recorded (EXPIRED → SUCCESS, `payment.completed` with `late: true`; one that is
   * not what was asked is held instead, still EXPIRED, as `payment.mismatched`);
   * anything else only moves the next check (a fault is logged and waits one interval too).
   */
  private async lateWatch(port: MonitorPort, policy: ExpiryPolicy): Promise<void> {
    const { clock, db, store, logger } = this.deps;
    const spec = this.spec;
    for (let round = 0; round < (spec.rounds ?? 1); round++) {
      const now = clock.now();
      const next = new Date(now.getTime() + policy.lateCheckMs);
      const batch = Math.max(1, Math.min(spec.batch, port.batchLimit?.(policy.lateCheckMs) ?? spec.batch));
      const claimed = await claimLate(db, spec.area, now, next, batch);
      if (claimed.length === 0) return;
      const outcomes = await this.ask(port, claimed);
      const again: string[] = [];
      const over: string[] = [];
      const faulty: string[] = [];
      for (const tx of claimed) {
        const o = outcomes.get(tx.id) ?? { kind: "unchanged" };
        // A late payment, or a late one that is not what was asked (held for an operator, 0183).
        const held = o.kind === "transition" && o.change.event === "payment.mismatched";
        if (o.kind === "transition" && (o.change.to === "SUCCESS" || held)) {
          const { won } = await store.transition({ id: tx.id, ...o.change, late: true });
          if (won && !held)
            logger.warn(
              { monitor: spec.name, transactionId: tx.id, expiredAt: tx.expiresAt.toISOString() },
              `${spec.name}: late payment recorded (paid, but seen after the transaction expired): reconcile it`,
            );
          continue;
        }
        if (o.kind === "fault") faulty.push(tx.id);
        (next.getTime() > tx.expiresAt.getTime() + policy.lateWatchMs ? over : again).push(tx.id);
      }
      await scheduleLate(db, over, null, false);
      await scheduleLate(
        db,
        again.filter((id) => !faulty.includes(id)),
        next,
        false,
      );
      await scheduleLate(
        db,
        again.filter((id) => faulty.includes(id)),
        next,
        true,
      );
      if (claimed.length < batch) return;
    }
  }
}
