import { mismatchRecord, type MismatchRecord } from "../transactions/mismatch.js";
import type { TxRecord } from "../transactions/record.js";

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * An approval (APPROVED, PRE-AUTH) that is not the order's: what arrived, or null when it is the order's amount and
 * currency. The gateway's check answer states them in `data` (developer.payway.com.kh, "Check transaction",
 * POST /api/payment-gateway/v1/payments/check-transaction-2, response `data`: payment_status_code, payment_status,
 * total_amount, original_amount, payment_amount, payment_currency, apv, transaction_date; transaction-detail answers
 * the same fields). `payment_amount` is what the payer paid and `total_amount` what the order came to: each one
 * stated must be the order's amount (exact decimals, nothing rounded), at least one must be stated, and
 * `payment_currency` must be the order's currency. An approval that does not say how much, or in what, is not proof
 * of this order's payment: it is held too (docs/decisions/0184-what-each-area-compares.md).
 */
export function approvalMismatch(
  tx: TxRecord,
  raw: Record<string, unknown>,
  source: string,
  now: Date,
): MismatchRecord | null {
  const data = isRecord(raw.data) ? raw.data : {};
  const stated = [data.payment_amount, data.total_amount].filter((v) => v !== undefined && v !== null);
  const asked = { amount: tx.amount, currency: tx.currency };
  const about = { reference: data.apv, source, at: now };
  // The first stated amount that differs is what arrived (payment_amount before total_amount); none differs: the first.
  const arrived = (amount: unknown) => ({ amount, currency: data.payment_currency });
  const differing = stated.map((amount) => mismatchRecord(asked, arrived(amount), about)).find((m) => m !== null);
  if (differing !== undefined) return differing;
  return stated.length === 0 ? mismatchRecord(asked, arrived(undefined), about) : null;
}
