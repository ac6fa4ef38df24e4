import type { JobSpec } from "../jobs/scheduler.js";
import { monitorJob, type CheckOutcome, type MonitorDeps, type MonitorPort } from "../transactions/monitor.js";
import type { NetworkClient } from "./network-client.js";

/**
 * The national network as the monitor loop sees it: one bulk call (its md5-list API, batched by the
 * client) for a claimed batch. Paid → SUCCESS (keeping the payer hash/account/time), failed → FAILED;
 * not found → unchanged (which, at or after the expiry, the loop turns into EXPIRED).
 */
export function networkMonitorPort(client: NetworkClient): MonitorPort {
  return {
    async check(txs) {
      const results = await client.checkByMd5List(txs.map((t) => t.md5 as string));
      const out = new Map<string, CheckOutcome>();
      for (const tx of txs) {
        const r = results.get(tx.md5 as string);
        if (r?.kind === "paid") {
          const payment = {
            hash: r.hash,
            fromAccountId: r.fromAccountId,
            toAccountId: r.toAccountId,
            amount: r.amount,
            currency: r.currency,
            acknowledgedDateMs: r.acknowledgedDateMs,
            createdDateMs: r.createdDateMs,
            ...(r.externalRef === null ? {} : { externalRef: r.externalRef }),
          };
          // Paid before expiry is paid (docs/decisions/0107-late-payments.md): on time when the payer sent the
          // money at or before the expiry, whenever the network acknowledged it. Sent after the expiry, or found
          // after the transaction was declared expired, it is a late payment: recorded all the same, flagged for
          // reconciliation.
          const sent = r.createdDateMs ?? r.acknowledgedDateMs;
          const late = tx.status === "EXPIRED" || (sent !== null && sent > tx.expiresAt.getTime());
          out.set(tx.id, {
            kind: "transition",
            change: { to: "SUCCESS", event: "payment.completed", upstream: { payment }, ...(late ? { late } : {}) },
          });
        } else if (r?.kind === "fault") {
          out.set(tx.id, { kind: "fault", error: r.message });
        } else if (r?.kind === "failed") {
          out.set(tx.id, {
            kind: "transition",
            change: { to: "FAILED", event: "payment.failed", upstream: { failure: { message: r.message } } },
          });
        }
      }
      return out;
    },
  };
}

/** Follows PENDING generic QR transactions until paid, failed or expired (transactions/monitor.ts). */
export function qrMonitorJob(deps: MonitorDeps & { intervalMs: number }, client: NetworkClient): JobSpec {
  return monitorJob(deps, {
    name: "qr.monitor",
    area: "qr",
    recheckMs: deps.intervalMs,
    batch: 500,
    rounds: 20,
    port: networkMonitorPort(client),
  });
}
