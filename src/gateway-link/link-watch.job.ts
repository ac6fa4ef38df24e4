import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { JobSpec } from "../jobs/scheduler.js";
import type { Logger } from "../logger.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { LinkWatch } from "./link-watch.js";
import { claimPolls, claimUnpolled, POLL_LEASE_MS, setLateWatch } from "./poll-store.js";

export interface LinkSweepDeps {
  clock: Clock;
  db: Db;
  store: TransactionStore;
  logger: Logger;
}

/**
 * The gateway-link area's sweep, every second on one worker at a time: ends the link transactions whose 180 s
 * passed with nothing to poll (a payment of the retired simulated page: decision 0217), and hands the due payments
 * followed without a page — pending ones, and expired ones whose next late poll is due — to this worker's watch, as
 * many as it has room for. Their claim is their lease (poll-store.ts).
 */
export function linkSweepJob(deps: LinkSweepDeps, watch: LinkWatch | null): JobSpec {
  const { clock, db, store, logger } = deps;
  return {
    name: "link.expire",
    every: "1 second",
    lockLifetimeMs: 30_000,
    async run() {
      const now = clock.now();
      for (const tx of await claimUnpolled(db, now, 500)) {
        if (tx.expiresAt.getTime() <= now.getTime())
          await store.transition({ id: tx.id, to: "EXPIRED", event: "payment.expired", nextCheckAt: null });
      }
      if (watch === null) return;
      // Late payments only with the poll slots pending ones leave (LINK_POLL_RATE): they are never in a hurry.
      const leaseUntil = new Date(now.getTime() + POLL_LEASE_MS);
      const claimed = await claimPolls(db, now, leaseUntil, Math.min(500, watch.room), watch.lateRoom);
      watch.swept();
      for (const tx of claimed) {
        if (watch.adopt(tx)) continue;
        // Its stored session does not open here: nothing can follow it, so it ends visibly instead of being
        // claimed again and again.
        if (tx.status === "EXPIRED") await setLateWatch(db, tx.id, null);
        else
          await store.transition({
            id: tx.id,
            to: "FAILED",
            event: "payment.failed",
            upstream: { failure: { message: "monitoring failed: the stored poll session does not open" } },
          });
        logger.warn({ tx: tx.id }, "payment-link poll session unreadable: not followed");
      }
    },
  };
}
