// GET /admin/export/transactions.csv: the reconciliation export for operators (admin token). Streamed a page at a
// time from the read model (TransactionQuery.each), waiting for the client to take each page before reading the
// next, so 100,000 rows cost the memory of one page and a slow client holds no database connection.

import type { Request, RequestHandler, Response } from "express";
import { once } from "node:events";
import type { FieldError } from "../errors.js";
import { sendError } from "../rest/shim.js";
import { csvColumns, csvLine, csvRow } from "./csv-export.js";
import type { TransactionFilter, TransactionQuery } from "./transaction-query.js";
import type { Area, TxStatus } from "./transaction.entity.js";

export const EXPORT_PATH = "/admin/export/transactions.csv";

const STATUSES: readonly TxStatus[] = ["PENDING", "CHECKOUT", "SUCCESS", "FAILED", "EXPIRED"];
/** Phnom Penh's offset (no daylight saving): a bare date is that day there. */
const LOCAL_OFFSET = "+07:00";
const PARAMS = new Set(["from", "to", "merchantId", "area", "status", "pageSize"]);

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
 * (`2026-11-25T00:00:00Z`, `…+07:00`); a timestamp without one is refused rather than guessed.
 */
export function parseInstant(raw: string): Date | null {
  const v = raw.trim();
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(v)
    ? `${v}T00:00:00${LOCAL_OFFSET}`
    : /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/i.test(v)
      ? v
      : null;
  if (iso === null) return null;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** The query string as an export request, or every problem with it (one per field). */
export function readExportRequest(
  q: Request["query"],
  areas: readonly string[],
): { ok: ExportRequest } | { problems: FieldError[] } {
  const problems: FieldError[] = [];
  const one = (name: string): string | undefined => {
    const v = q[name];
    if (v === undefined) return undefined;
    if (typeof v !== "string") {
      problems.push({ field: name, message: "must be given once, as text" });
      return undefined;
    }
    return v;
  };
  for (const name of Object.keys(q))
    if (!PARAMS.has(name)) problems.push({ field: name, message: `is not a parameter of this export` });
  const instant = (name: string): Date | null => {
    const raw = one(name);
    if (raw === undefined) {
      problems.push({ field: name, message: "is required: a date (YYYY-MM-DD, Phnom Penh) or an ISO 8601 timestamp" });
      return null;
    }
    const d = parseInstant(raw);
    if (d === null)
      problems.push({
        field: name,
        message: "must be a date (YYYY-MM-DD, that day in Phnom Penh) or an ISO 8601 timestamp with Z or an offset",
      });
    return d;
  };
  const from = instant("from");
  const to = instant("to");
  if (from !== null && to !== null && to.getTime() <= from.getTime())
    problems.push({ field: "to", message: "must be after from (to is exclusive)" });
  const merchantId = one("merchantId");
  if (merchantId !== undefined && !/^[\w-]{1,64}$/.test(merchantId))
    problems.push({ field: "merchantId", message: "must be a merchant id" });
  const area = one("area");
  if (area !== undefined && !areas.includes(area))
    problems.push({ field: "area", message: `must be one of ${areas.join(", ")}` });
  const status = one("status");
  if (status !== undefined && !(STATUSES as readonly string[]).includes(status))
    problems.push({ field: "status", message: `must be one of ${STATUSES.join(", ")}` });
  const pageSizeRaw = one("pageSize");
  const pageSize = pageSizeRaw === undefined ? 1000 : Number(pageSizeRaw);
  if (!Number.isInteger(pageSize) || pageSize < 100 || pageSize > 5000)
    problems.push({ field: "pageSize", message: "must be a whole number from 100 to 5000" });
  if (problems.length > 0 || from === null || to === null) return { problems };
  const filter: ExportRequest["filter"] = { createdFrom: from, createdTo: to };
  if (merchantId !== undefined) filter.merchantId = merchantId;
  if (area !== undefined) filter.area = area as Area;
  if (status !== undefined) filter.status = status as TxStatus;
  return { ok: { filter, pageSize } };
}

const day = (d: Date): string => d.toISOString().slice(0, 10);

export function exportRoute(deps: ExportRouteDeps): RequestHandler {
  return (req, res, next) => {
    if (!deps.isAdmin(req)) {
      res.setHeader("www-authenticate", 'Bearer realm="admin"');
      return sendError(res, 401, "UNAUTHENTICATED", `${EXPORT_PATH} needs Authorization: Bearer <ADMIN_TOKEN>`);
    }
    const read = readExportRequest(req.query, deps.areas);
    if ("problems" in read) return sendError(res, 400, "BAD_USER_INPUT", "Invalid export request", read.problems);
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
    `attachment; filename="transactions-${day(r.filter.createdFrom)}-${day(r.filter.createdTo)}.csv"`,
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
