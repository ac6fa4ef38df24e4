// GET /admin/export/transactions.csv: the reconciliation export for operators (admin token). Streamed a page at a
// time from the read model (TransactionQuery.each), waiting for the client to take each page before reading the
// next, so 100,000 rows cost the memory of one page and a slow client holds no database connection.

import type { Request, RequestHandler, Response } from "express";
import { once } from "node:events";
import type { FieldError } from "../errors.js";
import { sendError } from "../rest/shim.js";
import { Checker } from "../validation/checker.js";
import { matches, oneOf, wholeNumber, type Check } from "../validation/rules.js";
import { csvColumns, csvLine, csvRow } from "./csv-export.js";
import type { TransactionFilter, TransactionQuery } from "./transaction-query.js";
import type { Area, TxStatus } from "./transaction.entity.js";

export const EXPORT_PATH = "/admin/export/transactions.csv";

const STATUSES: readonly TxStatus[] = ["PENDING", "CHECKOUT", "SUCCESS", "FAILED", "EXPIRED"];
/** Phnom Penh's offset (no daylight saving): a bare date is that day there. */
const LOCAL_OFFSET = "+07:00";
const PARAMS = ["from", "to", "merchantId", "area", "status", "pageSize"];
/** The top-level message of a refused export (the Checker's problems are its details, as the REST error sends them). */
const EXPORT_REFUSED = "Invalid export request";

export interface ExportRouteDeps {
  query: Pick<TransactionQuery, "each" | "merchantName" | "views">;
  /** Whether the request carries the operator's credential (the admin token). */
  isAdmin(req: Request): boolean;
  /** The areas this service has (a filter naming another is refused, not answered with an empty file). */
  areas: readonly string[];
}

export interface ExportRequest {
  filter: TransactionFilter & { createdFrom: Date; createdTo: Date };
  pageSize: number;
}

/**
 * A date (`2026-11-25`: that day from midnight in Phnom Penh) or a timestamp with its offset
 * (`2026-11-25T00:00:00Z`, `…+07:00`); a timestamp without one is refused rather than guessed, and so is a day the
 * calendar does not have (`2026-11-31`: JavaScript's Date would roll it over to 1 December).
 */
export function parseInstant(raw: string): Date | null {
  const v = raw.trim();
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(v)
    ? `${v}T00:00:00${LOCAL_OFFSET}`
    : /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/i.test(v)
      ? v
      : null;
  if (iso === null || !calendarDay(v.slice(0, 10))) return null;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** Whether `YYYY-MM-DD` is a day of the calendar (month 1–12, day within that month of that year). */
export function calendarDay(ymd: string): boolean {
  const [y, m, d] = ymd.split("-").map(Number) as [number, number, number];
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/** The query string as an export request, or every problem with it (one per field). */
export function readExportRequest(
  q: Request["query"],
  areas: readonly string[],
): { ok: ExportRequest } | { problems: FieldError[] } {
  const c = new Checker();
  const one = (name: string): string | undefined => {
    const v = q[name];
    if (v === undefined || !c.check(name, v, matches("must be given once, as text"))) return undefined;
    return v as string;
  };
  for (const name of Object.keys(q)) c.check(name, name, oneOf([...PARAMS], "is not a parameter of this export"));
  const instant = (name: string): Date | null => {
    const raw = one(name);
    if (raw === undefined) {
      c.fail(name, "is required: a date (YYYY-MM-DD, Phnom Penh) or an ISO 8601 timestamp");
      return null;
    }
    const d = parseInstant(raw);
    if (d === null)
      c.fail(
        name,
        "is not a date: give a date (YYYY-MM-DD, that day in Phnom Penh) or an ISO 8601 timestamp with Z or an offset",
      );
    return d;
  };
  const from = instant("from");
  const to = instant("to");
  if (from !== null && to !== null && to.getTime() <= from.getTime())
    c.fail("to", "must be after from (to is exclusive)");
  const optional = (name: string, rule: Check<object>): string | undefined => {
    const v = one(name);
    return v !== undefined && c.check(name, v, rule) ? v : undefined;
  };
  const merchantId = optional("merchantId", matches("must be a merchant id", /^[\w-]{1,64}$/));
  const area = optional("area", oneOf(areas, `must be one of ${areas.join(", ")}`));
  const status = optional("status", oneOf(STATUSES, `must be one of ${STATUSES.join(", ")}`));
  const pageSizeRaw = one("pageSize");
  const pageSize = pageSizeRaw === undefined ? 1000 : Number(pageSizeRaw);
  c.check("pageSize", pageSize, wholeNumber(100, 5000, "must be a whole number from 100 to 5000"));
  if (c.errors.length > 0 || from === null || to === null) return { problems: c.errors };
  const filter: ExportRequest["filter"] = { createdFrom: from, createdTo: to };
  if (merchantId !== undefined) filter.merchantId = merchantId;
  if (area !== undefined) filter.area = area as Area;
  if (status !== undefined) filter.status = status as TxStatus;
  return { ok: { filter, pageSize } };
}

/** The Phnom Penh date holding `t` (the zone a bare date of `from`/`to` means). */
const localDay = (t: number): string => new Date(t + LOCAL_OFFSET_MS).toISOString().slice(0, 10);
const LOCAL_OFFSET_MS = 7 * 3600_000;

/**
 * The file's name: the Phnom Penh days the period covers, its first and its last (`to` is exclusive), one date when
 * they are the same day. "Today" in Phnom Penh on 28 November is transactions-2026-11-28.csv, the last 7 days
 * transactions-2026-11-22-2026-11-28.csv.
 */
export function exportFileName(from: Date, to: Date): string {
  const first = localDay(from.getTime());
  const last = localDay(to.getTime() - 1);
  return `transactions-${first === last ? first : `${first}-${last}`}.csv`;
}

export function exportRoute(deps: ExportRouteDeps): RequestHandler {
  return (req, res, next) => {
    if (!deps.isAdmin(req)) {
      res.setHeader("www-authenticate", 'Bearer realm="admin"');
      return sendError(res, 401, "UNAUTHENTICATED", `${EXPORT_PATH} needs Authorization: Bearer <ADMIN_TOKEN>`);
    }
    const read = readExportRequest(req.query, deps.areas);
    if ("problems" in read) return sendError(res, 400, "BAD_USER_INPUT", EXPORT_REFUSED, read.problems);
    void stream(deps, read.ok, res).catch(next);
  };
}

async function stream(deps: ExportRouteDeps, r: ExportRequest, res: Response): Promise<void> {
  const pages = deps.query.each({ type: "admin" }, r.filter, r.pageSize);
  // The first page is read before the answer starts: a database that is down is a 503 with an error body,
  // not a 200 with half a file.
  const first = await pages.next();
  res.status(200);
  res.setHeader("content-type", "text/csv; charset=utf-8; header=present");
  res.setHeader(
    "content-disposition",
    `attachment; filename="${exportFileName(r.filter.createdFrom, r.filter.createdTo)}"`,
  );
  res.setHeader("cache-control", "no-store");
  let closed = false;
  res.on("close", () => (closed = true));
  const write = async (chunk: string): Promise<void> => {
    if (!res.write(chunk) && !closed) await Promise.race([once(res, "drain"), once(res, "close")]);
  };
  try {
    const views = deps.query.views;
    const columns = csvColumns(views);
    await write(csvLine(columns));
    let page = first;
    while (!page.done && !closed) {
      let text = "";
      for (const tx of page.value)
        text += csvRow(tx, (await deps.query.merchantName(tx.merchantRef)) ?? "", views, columns);
      await write(text);
      if (closed) break;
      page = await pages.next();
    }
  } catch (err) {
    // Mid-file: the status is sent; cut the connection so the client sees a broken download, never a short file
    // that looks whole.
    res.destroy(err instanceof Error ? err : new Error(String(err)));
    return;
  } finally {
    await pages.return(undefined);
  }
  res.end();
}
