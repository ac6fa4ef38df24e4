import { toDate, toDateOrNull } from "../db/sql.js";
import type { Area, Json, TxStatus } from "./transaction.entity.js";
import { moneyText } from "../money/money.js";
import { mismatchOf, mismatchView } from "./mismatch.js";
import type { AreaViews } from "./area-views.js";

/** A transaction row as plain data (what services pass around). */
export interface TxRecord {
  id: string;
  area: Area;
  merchantRef: string;
  apiKeyRef: string;
  status: TxStatus;
  amount: string;
  currency: "USD" | "KHR";
  /** The upstream's identifier of the payment, whatever the area calls it (AreaDefinition.data; decision 0208). */
  upstreamRef: string | null;
  qr: string | null;
  meta: Json;
  request: Json;
  /** The area's part of the row (its own keys), and the core's late, mismatch, failure. */
  upstream: Json;
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
    upstreamRef: (r.upstream_ref as string | null) ?? null,
    qr: (r.qr as string | null) ?? null,
    meta: (r.meta as Json) ?? {},
    request: (r.request as Json) ?? {},
    upstream: (r.upstream as Json) ?? {},
    expiresAt: toDate(r.expires_at),
    createdAt: toDate(r.created_at),
    updatedAt: toDate(r.updated_at),
    completedAt: toDateOrNull(r.completed_at),
    nextCheckAt: toDateOrNull(r.next_check_at),
    checkFailures: Number(r.check_failures ?? 0),
    version: Number(r.version ?? 1),
  };
}

/**
 * The view of a transaction carried by events, webhooks and subscriptions: the core's keys, and the keys its area
 * shows there (AreaViews: each after the key its field names), only those the transaction has.
 */
export function snapshot(tx: TxRecord, views: AreaViews): Json {
  const core: [string, unknown][] = [
    ["transactionId", tx.id],
    ["area", tx.area],
    ["status", tx.status],
    ["amount", moneyText(tx.amount, tx.currency)],
    ["currency", tx.currency],
    ["expiredAt", tx.expiresAt.toISOString()],
    ["createdAt", tx.createdAt.toISOString()],
    ["updatedAt", tx.updatedAt.toISOString()],
  ];
  const mismatch = mismatchOf(tx);
  // Absent keys hold their place (undefined), so an area key placed after one lands where it always did.
  core.push(
    ["completedAt", tx.completedAt?.toISOString()],
    // What the upstream reported about the payment, as its area shows it (AreaDefinition.data.payment).
    ["payment", views.payment(tx)],
    ["late", tx.upstream.late === true ? true : undefined],
    ["mismatch", mismatch === null ? undefined : mismatchView(mismatch)],
  );
  return views.snapshot(tx, core);
}
