// The reconciliation export: one CSV row per transaction (RFC 4180), written from the read model a page at a
// time. Pure text rules here; the route that streams it (auth, query parameters, backpressure) is export-route.ts.

import { stringifyExact } from "../exact-json.js";
import { moneyText } from "../money/money.js";
import type { TxRecord } from "./record.js";
import type { AreaViews } from "./area-views.js";

/** Cambodia's clock (UTC+7, no daylight saving): the local time column of every timestamp. */
export const LOCAL_TIME_ZONE = "Asia/Phnom_Penh";

const LOCAL = new Intl.DateTimeFormat("en-CA", {
  timeZone: LOCAL_TIME_ZONE,
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hourCycle: "h23",
});

/** `2026-11-25 22:58:01` in Phnom Penh (a spreadsheet reads it as a date-time). */
export function localTime(d: Date | null): string {
  if (d === null) return "";
  const part = Object.fromEntries(LOCAL.formatToParts(d).map((x) => [x.type, x.value]));
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}:${part.second}`;
}

const utc = (d: Date | null): string => (d === null ? "" : d.toISOString());

/**
 * One cell. A cell a spreadsheet would run as a formula (it starts with `=`, `+`, `-`, `@`, a tab or a carriage
 * return) gets a leading apostrophe, shown as text by Excel, LibreOffice and Google Sheets; our own columns never
 * start so (amounts are positive), so only text from callers (meta, names, references) is ever changed. A cell
 * holding a comma, a quote or a line break is quoted, its quotes doubled (RFC 4180).
 */
export function csvCell(value: string): string {
  const guarded = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(guarded) ? `"${guarded.replace(/"/g, '""')}"` : guarded;
}

/** One record, CRLF-terminated as RFC 4180 writes them. */
export function csvLine(cells: readonly string[]): string {
  return `${cells.map(csvCell).join(",")}\r\n`;
}

/**
 * The core's columns, in order: name and how a transaction (with its merchant's name) fills it. The areas' own
 * (their identifiers, a receipt, the network's payment hash) are placed among them where each area's field or
 * column says (AreaDefinition.data).
 */
const COLUMNS: readonly [string, (tx: TxRecord, merchantName: string) => string][] = [
  ["transaction_id", (tx) => tx.id],
  ["merchant_id", (tx) => tx.merchantRef],
  ["merchant_name", (_tx, name) => name],
  ["area", (tx) => tx.area],
  ["status", (tx) => tx.status],
  ["amount", (tx) => moneyText(tx.amount, tx.currency)],
  ["currency", (tx) => tx.currency],
  ["created_at_utc", (tx) => utc(tx.createdAt)],
  ["created_at_phnom_penh", (tx) => localTime(tx.createdAt)],
  ["paid_at_utc", (tx) => utc(paidAt(tx))],
  ["paid_at_phnom_penh", (tx) => localTime(paidAt(tx))],
  ["expired_at_utc", (tx) => utc(expiredAt(tx))],
  ["expired_at_phnom_penh", (tx) => localTime(expiredAt(tx))],
  ["completed_at_utc", (tx) => utc(tx.completedAt)],
  ["late", (tx) => (tx.upstream.late === true ? "true" : "false")],
  // Exactly as the caller sent it (key order, number text), as the API returns it.
  ["meta", (tx) => stringifyExact(tx.meta)],
];

const CELLS = new Map(COLUMNS);

/** The export's columns: the core's and the areas'. */
export function csvColumns(views: AreaViews): string[] {
  return views.csvColumns(COLUMNS.map(([name]) => name));
}

/** The header line. */
export function csvHeader(views: AreaViews): string {
  return csvLine(csvColumns(views));
}

/** When the payment was made: a SUCCESS transaction's completion (a late one's too). */
function paidAt(tx: TxRecord): Date | null {
  return tx.status === "SUCCESS" ? tx.completedAt : null;
}

/** When it expired: an EXPIRED transaction's deadline, and a late payment's (it was paid after it). */
function expiredAt(tx: TxRecord): Date | null {
  return tx.status === "EXPIRED" || (tx.status === "SUCCESS" && tx.upstream.late === true) ? tx.expiresAt : null;
}

/** One transaction's line, its cells in the order of `columns` (csvColumns). */
export function csvRow(tx: TxRecord, merchantName: string, views: AreaViews, columns: readonly string[]): string {
  return csvLine(columns.map((c) => CELLS.get(c)?.(tx, merchantName) ?? views.csvCell(tx, c) ?? ""));
}
