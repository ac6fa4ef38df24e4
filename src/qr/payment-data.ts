import { moneyText } from "../money/money.js";
import type { AreaColumn, AreaRow } from "../module.js";

/**
 * The network's report of a paid QR, as the area keeps it (its own `upstream.payment`, written by paid-check.ts:
 * hash, accounts, amount, currency, createdDateMs, acknowledgedDateMs, externalRef), and what the rest of the
 * service shows of it (AreaDefinition.data): the event snapshot's `payment`, the checkout's reference and time, and
 * the export's hash and external reference columns.
 */
const reported = (tx: AreaRow): Record<string, unknown> | undefined => {
  const p = tx.upstream.payment;
  return p !== null && typeof p === "object" && !Array.isArray(p) ? (p as Record<string, unknown>) : undefined;
};

const text = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");

/**
 * The payer's payment as the network reported it (undefined when it has not), its amount written by the one money
 * rule (the network sends 1.5).
 */
export function paymentView(tx: AreaRow): unknown {
  const payment = tx.upstream.payment;
  if (payment === null || typeof payment !== "object") return payment;
  const p = payment as { amount?: unknown; currency?: unknown };
  if (typeof p.currency !== "string" || (typeof p.amount !== "string" && typeof p.amount !== "number")) return payment;
  return { ...p, amount: moneyText(p.amount, p.currency) };
}

/** The network's transaction hash: what the payer's app shows of the payment, and its bank knows it by. */
export const networkHash = (tx: AreaRow): string | null => {
  const hash = reported(tx)?.hash;
  return typeof hash === "string" && hash !== "" ? hash : null;
};

/** Epoch milliseconds a person could have paid at (2000 … 2100); anything else is not a time. */
const plausibleMs = (v: unknown): number | null =>
  typeof v === "number" && Number.isFinite(v) && v > 946_684_800_000 && v < 4_102_444_800_000 ? v : null;

/**
 * When the money moved by the network's clock: its acknowledged time, or its creation time (for a late payment
 * found long after, not when the service noticed).
 */
export function networkPaidAt(tx: AreaRow): Date | null {
  const p = reported(tx);
  const ms = plausibleMs(p?.acknowledgedDateMs) ?? plausibleMs(p?.createdDateMs);
  return ms === null ? null : new Date(ms);
}

/** The export's columns of the network's report, after the QR's md5. */
export const PAYMENT_COLUMNS: AreaColumn[] = [
  { column: "payment_hash", after: "md5", cell: (tx) => text(reported(tx)?.hash) },
  { column: "external_ref", after: "payment_hash", cell: (tx) => text(reported(tx)?.externalRef) },
];
