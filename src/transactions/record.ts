import { toDate, toDateOrNull } from "../db/sql.js";
import type { Area, Json, TxStatus } from "./transaction.entity.js";
import { moneyText } from "../money/money.js";
import { mismatchOf, mismatchView } from "./mismatch.js";

/** A transaction row as plain data (what services pass around). */
export interface TxRecord {
  id: string;
  area: Area;
  merchantRef: string;
  apiKeyRef: string;
  status: TxStatus;
  amount: string;
  currency: "USD" | "KHR";
  orderId: string | null;
  md5: string | null;
  clientId: string | null;
  qr: string | null;
  meta: Json;
  request: Json;
  upstream: Json;
  receiptUrl: string | null;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  nextCheckAt: Date | null;
  checkFailures: number;
  version: number;
}

export function rowToTx(r: Record<string, unknown>): TxRecord {
  return {
    id: r.id as string,
    area: r.area as Area,
    merchantRef: r.merchant_ref as string,
    apiKeyRef: r.api_key_ref as string,
    status: r.status as TxStatus,
    amount: String(r.amount),
    currency: r.currency as "USD" | "KHR",
    orderId: (r.order_id as string | null) ?? null,
    md5: (r.md5 as string | null) ?? null,
    clientId: (r.client_id as string | null) ?? null,
    qr: (r.qr as string | null) ?? null,
    meta: (r.meta as Json) ?? {},
    request: (r.request as Json) ?? {},
    upstream: (r.upstream as Json) ?? {},
    receiptUrl: (r.receipt_url as string | null) ?? null,
    expiresAt: toDate(r.expires_at),
    createdAt: toDate(r.created_at),
    updatedAt: toDate(r.updated_at),
    completedAt: toDateOrNull(r.completed_at),
    nextCheckAt: toDateOrNull(r.next_check_at),
    checkFailures: Number(r.check_failures ?? 0),
    version: Number(r.version ?? 1),
  };
}

/** The area-neutral view of a transaction carried by events, webhooks and subscriptions. */
export function snapshot(tx: TxRecord): Json {
  const out: Json = {
    transactionId: tx.id,
    area: tx.area,
    status: tx.status,
    amount: moneyText(tx.amount, tx.currency),
    currency: tx.currency,
    expiredAt: tx.expiresAt.toISOString(),
    createdAt: tx.createdAt.toISOString(),
    updatedAt: tx.updatedAt.toISOString(),
  };
  if (tx.orderId !== null) out.orderId = tx.orderId;
  if (tx.md5 !== null) out.md5 = tx.md5;
  if (tx.clientId !== null) out.clientId = tx.clientId;
  if (tx.receiptUrl !== null) out.receiptUrl = tx.receiptUrl;
  if (tx.completedAt !== null) out.completedAt = tx.completedAt.toISOString();
  if (tx.upstream.gatewayStatus !== undefined) out.gatewayStatus = tx.upstream.gatewayStatus;
  if (tx.upstream.payment !== undefined) out.payment = paymentView(tx.upstream.payment);
  if (tx.upstream.late === true) out.late = true;
  const mismatch = mismatchOf(tx);
  if (mismatch !== null) out.mismatch = mismatchView(mismatch);
  return out;
}

/** The payer's payment as the upstream reported it, its amount written by the one money rule (the network sends 1.5). */
function paymentView(payment: unknown): unknown {
  if (payment === null || typeof payment !== "object") return payment;
  const p = payment as { amount?: unknown; currency?: unknown };
  if (typeof p.currency !== "string" || (typeof p.amount !== "string" && typeof p.amount !== "number")) return payment;
  return { ...p, amount: moneyText(p.amount, p.currency) };
}
