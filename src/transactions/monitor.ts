import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { JobSpec } from "../jobs/scheduler.js";
import { claimDue, scheduleNext } from "./claim.js";
import type { TxRecord } from "./record.js";
import type { Area } from "./transaction.entity.js";
import type { TransactionStore, TransitionRequest } from "./transition.js";

/** What an area's upstream said of one transaction. */
export type CheckOutcome =
  /** A change to record: an outcome (SUCCESS, FAILED) or a visible change that keeps the status. */
  | { kind: "transition"; change: Omit<TransitionRequest, "id"> }
  /** The upstream answered: nothing new. */
  | { kind: "unchanged" }
  /** The upstream could not answer for it: back off; a fault never ends a transaction. */
  | { kind: "fault"; error: string };

/**
 * An area's upstream as the monitor loop sees it: asked about live (unexpired) transactions, in one call
 * per claimed batch. A throw is a fault for every transaction of the batch; a transaction missing from
 * the answer is unchanged.
 */
export interface MonitorPort {
  check(txs: TxRecord[]): Promise<Map<string, CheckOutcome>>;
}

export interface MonitorSpec {
  name: string;
  area: Area;
  /** How often the job runs; by default every `recheckMs` (in whole seconds, at least 1). */
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
  const { clock, db, store, logger } = deps;
  return {
    name: spec.name,
    every: spec.every ?? `${Math.max(1, Math.round(spec.recheckMs / 1000))} seconds`,
    lockLifetimeMs: spec.lockLifetimeMs ?? 60_000,
    async run() {
      for (let round = 0; round < (spec.rounds ?? 1); round++) {
        const now = clock.now();
        const claimed = await claimDue(db, spec.area, now, new Date(now.getTime() + spec.recheckMs), spec.batch, {
          nextCheck: true,
        });
        if (claimed.length === 0) return;
        const live: TxRecord[] = [];
        for (const tx of claimed) {
          if (tx.expiresAt.getTime() <= now.getTime())
            await store.transition({ id: tx.id, to: "EXPIRED", event: "payment.expired" });
          else live.push(tx);
        }
        if (live.length > 0 && spec.port !== null) await record(live, await ask(spec.port, live));
        if (claimed.length < spec.batch) return;
      }
    },
  };

  async function ask(port: MonitorPort, live: TxRecord[]): Promise<Map<string, CheckOutcome>> {
    try {
      return await port.check(live);
    } catch (err) {
      const fault: CheckOutcome = { kind: "fault", error: (err as Error).message };
      return new Map(live.map((tx) => [tx.id, fault]));
    }
  }

  async function record(live: TxRecord[], outcomes: Map<string, CheckOutcome>): Promise<void> {
    const recovered: string[] = [];
    const backoff = new Map<number, string[]>();
    let lastError = "";
    for (const tx of live) {
      const o = outcomes.get(tx.id) ?? { kind: "unchanged" };
      if (o.kind === "fault") {
        const wait = faultBackoffMs(spec.recheckMs, tx.checkFailures + 1);
        backoff.set(wait, [...(backoff.get(wait) ?? []), tx.id]);
        lastError = o.error;
        continue;
      }
      if (o.kind === "transition") await store.transition({ id: tx.id, ...o.change });
      // Only one that had been backing off needs its failure count reset (and its next check from now).
      if (tx.checkFailures > 0) recovered.push(tx.id);
    }
    const now = clock.now().getTime();
    for (const [wait, ids] of backoff) await scheduleNext(db, ids, new Date(now + wait), true);
    if (backoff.size > 0) {
      const count = [...backoff.values()].reduce((n, ids) => n + ids.length, 0);
      logger.warn(
        { monitor: spec.name, err: lastError, count, backoffMs: Math.max(...backoff.keys()) },
        `${spec.name}: upstream check failed; backing off`,
      );
    }
    await scheduleNext(db, recovered, new Date(now + spec.recheckMs), false);
  }
}
