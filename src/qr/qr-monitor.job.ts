import type { JobSpec } from "../jobs/scheduler.js";
import { monitorJob, type CheckOutcome, type MonitorDeps, type MonitorPort } from "../transactions/monitor.js";
import { AppError } from "../errors.js";
import type { NetworkClient, NetworkResult } from "./network-client.js";
import { paidOutcome } from "./paid-check.js";

/** Faults the area reports once itself (a refused token, a 429 pause): no monitor warning per batch for them. */
const TOLD_ONCE = new Set(["UNAUTHORIZED", "RATE_LIMITED"]);

/** The whole batch's fault, quiet when it is one of those; any other error is thrown on (the loop's own warning). */
async function listed(
  client: NetworkClient,
  txs: { upstreamRef: string | null }[],
): Promise<Map<string, NetworkResult>> {
  const md5s = txs.map((t) => t.upstreamRef as string);
  try {
    return await client.checkByMd5List(md5s);
  } catch (err) {
    const reason = err instanceof AppError ? err.extra.reason : undefined;
    if (typeof reason !== "string" || !TOLD_ONCE.has(reason)) throw err;
    return new Map(md5s.map((m) => [m, { kind: "fault", message: (err as Error).message, reason }]));
  }
}

/**
 * The national network as the monitor loop sees it: one bulk call (its md5-list API, batched by the
 * client) for a claimed batch. Paid → SUCCESS (keeping the payer hash/account/time) when it is what the QR asked, else
 * held (payment.mismatched, paid-check.ts); failed → FAILED;
 * not found → unchanged (which, at or after the expiry, the loop turns into EXPIRED).
 */
export function networkMonitorPort(
  client: NetworkClient,
  now: () => Date = () => new Date(),
  singleRate = Infinity,
): MonitorPort {
  return {
    // In single mode each md5 is a paced call (NETWORK_SINGLE_RATE a second): a round claims what that rate
    // checks within the claim's lease, so another worker never claims md5s still waiting their turn here.
    batchLimit: (leaseMs) =>
      client.mode() === "single" ? Math.max(1, Math.floor((singleRate * leaseMs) / 1000)) : Infinity,
    async check(txs) {
      const results = await listed(client, txs);
      const out = new Map<string, CheckOutcome>();
      for (const tx of txs) {
        const r = results.get(tx.upstreamRef as string);
        if (r?.kind === "paid") {
          // Completed only when it is what the QR asked (paid-check.ts); else held as payment.mismatched.
          out.set(tx.id, paidOutcome(tx, r, now()));
        } else if (r?.kind === "fault") {
          out.set(tx.id, { kind: "fault", error: r.message, quiet: TOLD_ONCE.has(r.reason ?? "") });
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
export function qrMonitorJob(
  deps: MonitorDeps & { intervalMs: number; singleRate: number },
  client: NetworkClient,
): JobSpec {
  return monitorJob(deps, {
    name: "qr.monitor",
    area: "qr",
    recheckMs: deps.intervalMs,
    batch: 500,
    rounds: 20,
    port: networkMonitorPort(client, () => deps.clock.now(), deps.singleRate),
  });
}
