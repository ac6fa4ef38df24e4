// An approval of a payment-link payment completes it only when what was paid is what was asked
// (docs/decisions/0184-what-each-area-compares.md): the QR the page produced (the one the payer paid) against the
// request; PayWay's approval states no paid figures. Anything else is held as payment.mismatched, through the one
// transition function, and the payment is followed no more.

import { decodeKhqr } from "../khqr/index.js";
import type { TxRecord } from "../transactions/record.js";
import type { TransactionStore, TransitionRequest, TransitionResult } from "../transactions/transition.js";
import { currencyCode } from "../money/money.js";
import { mismatchRecord, type MismatchRecord } from "../transactions/mismatch.js";

/**
 * What differs in an approval, or null. The stored QR is read as KHQR (amount tag 54, currency tag 53; a QR without
 * an amount lets the payer pay any, so it differs too); a QR that is not KHQR says nothing to compare.
 */
export function approvalMismatch(tx: TxRecord, now: Date): MismatchRecord | null {
  const asked = { amount: tx.amount, currency: tx.currency };
  const decoded = tx.qr === null ? null : decodeKhqr(tx.qr);
  if (decoded === null || decoded.status.code !== 0) return null;
  const d = decoded.data;
  const qr = { amount: d.transactionAmount, currency: currencyCode(d.transactionCurrency) ?? d.transactionCurrency };
  return mismatchRecord(asked, qr, { reference: tx.upstreamRef, source: "payment-link page's QR", at: now });
}

/**
 * What an approval changes: SUCCESS (`change`, as the caller built it) when it is what was asked, else the hold (with
 * the receipt URL, if one came). `late` as the caller would record the SUCCESS.
 */
export function approvalChange(tx: TxRecord | null, change: TransitionRequest, now: Date): TransitionRequest {
  const mismatch = tx === null ? null : approvalMismatch(tx, now);
  if (mismatch === null) return change;
  return {
    id: change.id,
    event: "payment.mismatched",
    mismatch,
    upstream: change.upstream,
    ...(change.late === true ? { late: true } : {}),
  };
}

/** Records an approval (approvalChange) through the one transition function. */
export async function recordApproval(
  store: TransactionStore,
  change: TransitionRequest,
  now: Date,
): Promise<TransitionResult> {
  return store.transition(approvalChange(await store.get(change.id), change, now));
}
