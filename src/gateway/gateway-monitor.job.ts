import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { AdminService } from "../admin/admin-service.js";
import type { JobSpec } from "../jobs/scheduler.js";
import { claimDue, scheduleNext } from "../transactions/claim.js";
import type { GatewayClient } from "./upstream-client.js";
import type { TransitionRequest } from "../transactions/transition.js";

/**
 * The upstream payment status → our status (docs/decisions.md "Gateway status mapping").
 * Anything else (PENDING, NOT_FOUND, unknown) leaves the transaction in CHECKOUT until its expiry.
 */
export function mapGatewayStatus(paymentStatus: string): Pick<TransitionRequest, "to" | "event"> | null {
  switch (paymentStatus) {
    case "APPROVED":
    case "PRE-AUTH":
      return { to: "SUCCESS", event: "payment.completed" };
    case "DECLINED":
    case "CANCELLED":
    case "REFUNDED":
      return { to: "FAILED", event: "payment.failed" };
    default:
      return null;
  }
}

/** Polls CHECKOUT gateway transactions with the check-transaction API; faults back off, never end a transaction. */
export interface GatewayMonitorDeps {
  clock: Clock;
  db: Db;
  store: TransactionStore;
  logger: Logger;
  admin: Pick<AdminService, "apiKey" | "gatewayCredentials">;
  intervalMs: number;
}

export function gatewayMonitorJob(deps: GatewayMonitorDeps, client: GatewayClient): JobSpec {
  const { clock, db, store, logger, admin } = deps;
  const interval = deps.intervalMs;
  return {
    name: "gateway.monitor",
    every: `${Math.max(1, Math.round(interval / 1000))} seconds`,
    lockLifetimeMs: 60_000,
    async run() {
      const now = clock.now();
      const claimed = await claimDue(db, "gateway", now, new Date(now.getTime() + 60_000), 200);
      const creds = new Map<string, { merchantId: string; apiKey: string } | null>();
      await Promise.all(claimed.map(async (tx) => {
        if (tx.expiresAt.getTime() <= now.getTime()) {
          await store.transition({ id: tx.id, to: "EXPIRED", event: "payment.expired" });
          return;
        }
        const key = await admin.apiKey(tx.apiKeyRef);
        const cfg = key?.gatewayConfigRef ?? null;
        if (cfg !== null && !creds.has(cfg)) creds.set(cfg, await admin.gatewayCredentials(cfg));
        const cred = cfg === null ? null : creds.get(cfg);
        if (!cred) return scheduleNext(db, [tx.id], new Date(clock.now().getTime() + 60_000), true);
        try {
          const r = await client.checkTransaction(cred, tx.orderId as string);
          const mapped = mapGatewayStatus(r.paymentStatus);
          const gatewayStatus = { code: r.statusCode, message: r.message };
          if (mapped) await store.transition({ id: tx.id, ...mapped, upstream: { gatewayStatus, paymentStatus: r.paymentStatus } });
          else {
            // A visible change that is not an outcome (e.g. the gateway starts reporting PENDING): transaction.updated.
            if (r.paymentStatus !== tx.upstream.paymentStatus) await store.transition({ id: tx.id, event: "transaction.updated", upstream: { gatewayStatus, paymentStatus: r.paymentStatus } });
            await scheduleNext(db, [tx.id], new Date(clock.now().getTime() + interval), false);
          }
        } catch (err) {
          const backoff = Math.min(interval * 2 ** Math.min(tx.checkFailures + 1, 6), 60_000);
          logger.warn({ err: (err as Error).message, tx: tx.id, backoffMs: backoff }, "gateway check failed; backing off");
          await scheduleNext(db, [tx.id], new Date(clock.now().getTime() + backoff), true);
        }
      }));
    },
  };
}
