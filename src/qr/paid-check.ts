import { decodeKhqr } from "../khqr/index.js";
import type { CheckOutcome } from "../transactions/monitor.js";
import { currencyCode } from "../money/money.js";
import { mismatchRecord } from "../transactions/mismatch.js";
import type { TxRecord } from "../transactions/record.js";
import type { NetworkResult } from "./network-client.js";

type Paid = Extract<NetworkResult, { kind: "paid" }>;

/** Where the answer comes from (Bakong Open API Documentation v1.0.2, §5 "Check Transaction Status by MD5"). */
const SOURCE = "network check_transaction_by_md5";

/**
 * What the QR issued for the transaction asks: its own amount (tag 54), currency (tag 53) and receiving account
 * (tag 29/30 sub 00), as the payer's app read them. A QR that does not decode (never one we issued) is judged by the
 * transaction's amount and currency alone.
 */
function askedBy(tx: TxRecord): { amount: string; currency: string; account: string | null } {
  const decoded = tx.qr === null ? null : decodeKhqr(tx.qr);
  if (decoded === null || decoded.status.code !== 0) return { amount: tx.amount, currency: tx.currency, account: null };
  const d = decoded.data;
  return {
    amount: d.transactionAmount ?? tx.amount,
    currency: currencyCode(d.transactionCurrency) ?? tx.currency,
    account: d.bankAccountID,
  };
}

/**
 * The network found the md5 paid: what to record. The answer's `data` (Bakong Open API Documentation v1.0.2, National
 * Bank of Cambodia, §5.3 "Response" of check_transaction_by_md5: hash, fromAccountId, toAccountId, currency, amount,
 * description, createdDateMs, acknowledgedDateMs) says what was paid to whom; it completes the payment only when its
 * amount (an exact decimal: 1.00 is not 1.50, 1.505 is not 1.50), currency and receiving account (toAccountId) are the
 * QR's. Anything else holds the payment as `payment.mismatched` (docs/decisions/0184-what-each-area-compares.md).
 * Paid before expiry is paid (docs/decisions/0107-late-payments.md): on time when the payer sent the money at or
 * before the expiry, whenever the network acknowledged it; sent after it, or found after the transaction was declared
 * expired, it is a late payment, recorded all the same and flagged for reconciliation.
 */
export function paidOutcome(tx: TxRecord, r: Paid, now: Date): CheckOutcome {
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
  const sent = r.createdDateMs ?? r.acknowledgedDateMs;
  const late = tx.status === "EXPIRED" || (sent !== null && sent > tx.expiresAt.getTime());
  const mismatch = mismatchRecord(
    askedBy(tx),
    { amount: r.amount, currency: r.currency, account: r.toAccountId },
    { reference: r.hash, source: SOURCE, at: now },
  );
  const lateFlag = late ? { late } : {};
  if (mismatch !== null)
    return {
      kind: "transition",
      change: { event: "payment.mismatched", mismatch, upstream: { payment }, ...lateFlag },
    };
  return {
    kind: "transition",
    change: { to: "SUCCESS", event: "payment.completed", upstream: { payment }, ...lateFlag },
  };
}
