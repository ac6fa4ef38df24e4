import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { JobSpec } from "../jobs/scheduler.js";
import { claimDue, scheduleNext } from "../transactions/claim.js";
import type { NetworkClient } from "./network-client.js";

const BATCH = 500;

/**
 * Follows PENDING generic QR transactions: claims the due ones, ends the expired ones, checks the rest
 * against the national network in bulk (its md5-list API, batched by the client), and transitions paid →
 * SUCCESS (keeping the payer hash/account/time), failed → FAILED. An upstream fault backs off and never
 * produces a terminal state.
 */
export interface QrMonitorDeps {
  clock: Clock;
  db: Db;
  store: TransactionStore;
  logger: Logger;
  intervalMs: number;
}

export function qrMonitorJob(deps: QrMonitorDeps, client: NetworkClient): JobSpec {
  const { clock, db, store, logger } = deps;
  const interval = deps.intervalMs;
  return {
    name: "qr.monitor",
    every: `${Math.max(1, Math.round(interval / 1000))} seconds`,
    lockLifetimeMs: 60_000,
    async run() {
      for (let round = 0; round < 20; round++) {
        const now = clock.now();
        // The claim already sets the next check (one interval on, or the expiry): an unpaid QR costs one update per check.
        const claimed = await claimDue(db, "qr", now, new Date(now.getTime() + interval), BATCH, { nextCheck: true });
        if (claimed.length === 0) return;
        const live = [];
        for (const tx of claimed) {
          if (tx.expiresAt.getTime() <= now.getTime()) await store.transition({ id: tx.id, to: "EXPIRED", event: "payment.expired" });
          else live.push(tx);
        }
        if (live.length === 0) continue;
        let results;
        try {
          results = await client.checkByMd5List(live.map((t) => t.md5 as string));
        } catch (err) {
          const failures = Math.min(...live.map((t) => t.checkFailures)) + 1;
          const backoff = Math.min(interval * 2 ** Math.min(failures, 6), 60_000);
          logger.warn({ err: (err as Error).message, count: live.length, backoffMs: backoff }, "network check failed; backing off");
          await scheduleNext(db, live.map((t) => t.id), new Date(clock.now().getTime() + backoff), true);
          return;
        }
        const recovered: string[] = [];
        for (const tx of live) {
          const r = results.get(tx.md5 as string);
          if (r?.kind === "paid") {
            await store.transition({
              id: tx.id, to: "SUCCESS", event: "payment.completed",
              upstream: { payment: { hash: r.hash, fromAccountId: r.fromAccountId, toAccountId: r.toAccountId, amount: r.amount, currency: r.currency, acknowledgedDateMs: r.acknowledgedDateMs, createdDateMs: r.createdDateMs } },
            });
          } else if (r?.kind === "failed") {
            await store.transition({ id: tx.id, to: "FAILED", event: "payment.failed", upstream: { failure: { message: r.message } } });
          } else if (tx.checkFailures > 0) recovered.push(tx.id);
        }
        // Only a QR that had been backing off needs its failure count reset (and its next check from now).
        await scheduleNext(db, recovered, new Date(clock.now().getTime() + interval), false);
        if (claimed.length < BATCH) return;
      }
    },
  };
}
