import type { AreaRecheck, RecheckAnswer } from "../transactions/recheck.js";
import type { CheckOutcome, MonitorPort } from "../transactions/monitor.js";
import { describeMismatch } from "../transactions/mismatch.js";

/**
 * How long after its expiry a generic QR payment may be rechecked (docs/decisions/0193-recheck-windows.md): 30 days,
 * the longest late watch the area may be set to (QR_LATE_WATCH_MS). The QR's own tag 99 makes wallets refuse it
 * after the expiry, so what a recheck can still find is a payment sent in time and seen late (a slow acknowledgement,
 * or a network the service could not ask: a refused token, an outage longer than the late watch).
 */
export const QR_RECHECK_AFTER_EXPIRY_MS = 30 * 24 * 3600_000;

/** What the network's answer says, in a sentence. */
function said(o: CheckOutcome): string {
  if (o.kind === "fault") return `the network could not be asked: ${o.error}`;
  if (o.kind === "unchanged") return "the network has no payment of this QR (check_transaction_by_md5: not found)";
  const c = o.change;
  if (c.mismatch !== undefined)
    return `the network reports a payment that is not what was asked: ${describeMismatch(c.mismatch)}`;
  const payment = (c.upstream?.payment ?? {}) as { hash?: string; fromAccountId?: string };
  if (c.to === "SUCCESS")
    return `the network reports it paid (hash ${payment.hash ?? "?"}, from ${payment.fromAccountId ?? "?"})`;
  const failure = (c.upstream?.failure ?? {}) as { message?: string };
  return `the network reports the payment failed: ${failure.message ?? "no reason given"}`;
}

/**
 * A recheck of a generic QR payment: one check of its md5, through the monitor's own port (the same client, so
 * single-md5 mode and its rate cap hold for it too), whose outcome is recorded as the monitor records it.
 */
export function qrRecheck(port: MonitorPort): AreaRecheck {
  return {
    window: (tx) => ({
      endsAt: new Date(tx.expiresAt.getTime() + QR_RECHECK_AFTER_EXPIRY_MS),
      rule: "a generic QR payment is rechecked until 30 days after its expiry",
    }),
    async ask(tx): Promise<RecheckAnswer> {
      if (tx.upstreamRef === null)
        return { outcome: { kind: "fault", error: "it has no md5" }, said: "it has no md5 to ask" };
      const outcome = (await port.check([tx])).get(tx.id) ?? { kind: "unchanged" };
      return { outcome, said: said(outcome) };
    },
  };
}
