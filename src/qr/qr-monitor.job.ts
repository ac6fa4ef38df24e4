import type { JobSpec } from "../jobs/scheduler.js";
import { monitorJob, type CheckOutcome, type MonitorDeps, type MonitorPort } from "../transactions/monitor.js";
import type { NetworkClient } from "./network-client.js";
import { paidOutcome } from "./paid-check.js";

/**
 * The national network as the monitor loop sees it: one bulk call (its md5-list API, batched by the
 * client) for a claimed batch. Paid → SUCCESS (keeping the payer hash/account/time) when it is what the QR asked, else
 * held (payment.mismatched, paid-check.ts); failed → FAILED;
 * not found → unchanged (which, at or after the expiry, the loop turns into EXPIRED).
 */
export function networkMonitorPort(client: NetworkClient, now: () => Date = () => new Date()): MonitorPort {
  return {
    async check(txs) {
      const results = await client.checkByMd5List(txs.map((t) => t.md5 as string));
      const out = new Map<string, CheckOutcome>();
      for (const tx of txs) {
        const r = results.get(tx.md5 as string);
        if (r?.kind === "paid") {
          // Completed only when it is what the QR asked (paid-check.ts); else held as payment.mismatched.
          out.set(tx.id, paidOutcome(tx, r, now()));
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
    port: networkMonitorPort(client, () => deps.clock.now()),
  });
}
