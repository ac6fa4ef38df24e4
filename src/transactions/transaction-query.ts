import { createHash } from "node:crypto";
import { AppError } from "../errors.js";
import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { Principal } from "../auth/principal.js";
import { rowToTx, type TxRecord } from "./record.js";
import type { AreaViews } from "./area-views.js";
import type { Area, TxStatus } from "./transaction.entity.js";
import { TtlCache } from "../cache/ttl-cache.js";
import { Batcher, refusedByDatabase } from "../db/batcher.js";
import { dueSql, LATE_SQL } from "./read-status.js";
import { heldSql } from "./mismatch.js";
import { overviewFigures, type OverviewArgs, type OverviewFigures } from "./overview.js";
import { checkArgument, refuse } from "../validation/checker.js";
import { groupedBy } from "../db/grouped.js";
import { EVENT_COLUMNS, rowToEvent } from "./outbox-sql.js";
import { TX_COLUMNS, type TransactionStore } from "./transition.js";
import type { StoredEvent } from "./stored-event.js";
import { text, wholeNumber } from "../validation/rules.js";

export interface TransactionFilter {
  area?: Area;
  status?: TxStatus;
  createdFrom?: Date;
  createdTo?: Date;
  /** transactionId, or the upstream identifier of an area whose own is searched: exact or by prefix. */
  search?: string;
  /** Only late payments (true) or only the others (false). */
  latePayment?: boolean;
  /** Only held payments (a mismatch no operator resolved yet: 0183), or only the others. */
  mismatched?: boolean;
  /** One merchant's (the operator's reads; a key's scope is its own merchant already). */
  merchantId?: string;
}

export interface TransactionPage {
  rows: { cursor: string; tx: TxRecord }[];
  hasNextPage: boolean;
}

export const MAX_PAGE = 100;
const FIRST = wholeNumber(1, MAX_PAGE, `must be a whole number from 1 to ${MAX_PAGE}`);
/** The search text, trimmed (its characters are not checked: a LIKE prefix, bound as a parameter). */
const SEARCH = text({ max: 100, storable: false });

/** A position in the (created_at desc, id desc) order: the row's timestamp as PostgreSQL prints it (microseconds kept) and its id. */
interface Position {
  c: string;
  i: string;
}

/** How PostgreSQL prints a timestamptz: "2026-01-01 10:00:00.123456+00". */
const TIMESTAMP_TEXT =
  /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?[+-](\d{2})(?::(\d{2}))?(?::(\d{2}))?$/;

/**
 * The shape alone let a crafted cursor reach PostgreSQL with a date it refuses (month 13, 30 February, year
 * 0): a 500. Every part is checked to be a real instant, so a cursor the API did not return is a 400.
 */
function isRealTimestamp(text: string): boolean {
  const m = TIMESTAMP_TEXT.exec(text);
  if (m === null) return false;
  const [y, mo, d, h, mi, s, oh = 0, om = 0, os = 0] = [m[1], m[2], m[3], m[4], m[5], m[6], m[8], m[9], m[10]].map(
    (v) => Number(v ?? 0),
  );
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  return (
    y >= 1 &&
    date.getUTCFullYear() === y &&
    date.getUTCMonth() === mo - 1 &&
    date.getUTCDate() === d &&
    h < 24 &&
    mi < 60 &&
    s < 60 &&
    oh <= 15 &&
    om < 60 &&
    os < 60
  );
}

export function encodeCursor(p: Position): string {
  return Buffer.from(JSON.stringify([p.c, p.i])).toString("base64url");
}

export function decodeCursor(cursor: string): Position {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      typeof v[0] === "string" &&
      typeof v[1] === "string" &&
      /^[A-Za-z0-9_-]{1,100}$/.test(v[1]) &&
      isRealTimestamp(v[0])
    )
      return { c: v[0], i: v[1] };
  } catch {
    /* falls through to the error below */
  }
  throw refuse("after", "is not a cursor this API returned", "Invalid cursor");
}

/** A prepared statement's name for one statement text (the same text, the same name, in every process). */
function shapeName(sql: string): string {
  return createHash("sha1").update(sql).digest("hex").slice(0, 16);
}

/** `%`, `_` and `\` are literal in a search prefix. */
const likePrefix = (s: string) => `${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Read side of the transaction family for dashboards and clients: a Relay-style page in a stable order
 * (created_at desc, id desc, served by transaction_created_idx / transaction_key_created_idx) and one
 * transaction with its timeline. Scope comes from the principal: a key sees what it created, a client
 * token its one transaction, the operator everything.
 */
export class TransactionQuery {
  /** Merchant id → display name (a checkout page shows it); names change rarely, a minute's staleness is fine. */
  private readonly names: TtlCache<string>;

  constructor(
    private readonly db: Db,
    private readonly store: TransactionStore,
    private readonly clock: Clock,
  ) {
    this.names = new TtlCache(60_000, () => clock.now().getTime(), 1000);
  }

  /** What the areas keep and show of their transactions (the store's). */
  get views(): AreaViews {
    return this.store.views;
  }

  /** The operators' overview of payments created in [from, to) (admin only: checked by the resolver). */
  async overview(args: OverviewArgs): Promise<OverviewFigures> {
    return overviewFigures(this.db, this.store, this.clock.now(), args);
  }

  /** The name the payer's app shows for this merchant (its KHQR merchant name). */
  async merchantName(merchantRef: string): Promise<string | null> {
    return (await this.merchantNames([merchantRef]))[0];
  }

  /**
   * The names of several merchants, in the order asked: the ones not known from the last minute in one statement
   * (a page's rows ask together: graphql/per-request.ts).
   */
  async merchantNames(merchantRefs: readonly string[]): Promise<(string | null)[]> {
    // The cache asks for each name it does not hold as it is asked (synchronously): the statement goes after the
    // last of them, for all of them.
    const missing: string[] = [];
    let found: Promise<Map<string, string>> | undefined;
    const read = () =>
      (found ??= Promise.resolve().then(async () => {
        const rows = await this.db.query<{ id: string; merchant_name: string }>(
          `select id, merchant_name from merchant where id = any(?::text[])`,
          [missing],
          "pqr_merchant_names",
        );
        return new Map(rows.map((r) => [r.id, r.merchant_name]));
      }));
    return Promise.all(
      merchantRefs.map((ref) =>
        this.names.get(ref, async () => {
          missing.push(ref);
          return (await read()).get(ref) ?? null;
        }),
      ),
    );
  }

  /**
   * The timelines of several transactions (every committed change, oldest first, at most `limit` each), in the order
   * asked: one statement, an index range of transaction_event_tx_idx per transaction.
   */
  async timelines(transactionIds: readonly string[], limit = 1000): Promise<StoredEvent[][]> {
    const rows = await this.db.query(
      `select e.* from unnest(?::text[]) as t(id) cross join lateral
         (select ${EVENT_COLUMNS} from transaction_event where transaction_ref = t.id order by seq limit ?) e
       order by e.transaction_ref, e.seq`,
      [[...new Set(transactionIds)], limit],
      "pqr_timelines",
    );
    return groupedBy(transactionIds, rows.map(rowToEvent), (e) => e.transactionId);
  }

  async page(
    p: Principal,
    args: { first: number; after?: string; filter?: TransactionFilter },
  ): Promise<TransactionPage> {
    const first = args.first;
    checkArgument("first", first, FIRST, `first must be 1 to ${MAX_PAGE}`);
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, ...values: unknown[]) => {
      where.push(sql);
      params.push(...values);
    };
    this.scope(p, add);
    const scoped = where.length;
    this.filters(args.filter ?? {}, add);
    const prepared = where.length === scoped;
    if (args.after !== undefined && args.after !== null) {
      const pos = decodeCursor(args.after);
      add("(created_at, id) < (?::timestamptz, ?)", pos.c, pos.i);
    }
    const sql = `select ${TX_COLUMNS}, created_at::text as created_at_text from "transaction"
       ${where.length ? `where ${where.join(" and ")}` : ""} order by created_at desc, id desc limit ?`;
    // The unfiltered shapes (scope and cursor only: the dashboard's first view, a client's pages) are prepared, one
    // name per text; a filter's plan depends on its values (a status, a search prefix), so those are planned each time.
    const rows = await this.db.query(sql, [...params, first + 1], prepared ? `pqr_page_${shapeName(sql)}` : undefined);
    const page = rows.slice(0, first);
    const out: TransactionPage["rows"] = [];
    for (const r of page)
      out.push({
        cursor: encodeCursor({ c: String(r.created_at_text), i: String(r.id) }),
        tx: await this.store.expireIfDue(rowToTx(r)),
      });
    return { rows: out, hasNextPage: rows.length > first };
  }

  /**
   * Every transaction the principal may see that matches, oldest first, as reads show them (expired on read),
   * `pageSize` rows per statement: a keyset walk on (created_at, id), so an export of any length holds one page
   * in memory and no transaction open between pages (the embedded database cuts long ones).
   */
  async *each(p: Principal, filter: TransactionFilter, pageSize = 1000): AsyncGenerator<TxRecord[]> {
    const base: string[] = [];
    const baseParams: unknown[] = [];
    const add = (sql: string, ...values: unknown[]) => {
      base.push(sql);
      baseParams.push(...values);
    };
    this.scope(p, add);
    this.filters(filter, add);
    let after: { c: string; i: string } | null = null;
    for (;;) {
      const where: string[] = after === null ? base : [...base, "(created_at, id) > (?::timestamptz, ?)"];
      const params: unknown[] = after === null ? baseParams : [...baseParams, after.c, after.i];
      const rows: Record<string, unknown>[] = await this.db.query(
        `select *, created_at::text as created_at_text from "transaction"
         ${where.length ? `where ${where.join(" and ")}` : ""} order by created_at, id limit ?`,
        [...params, pageSize],
      );
      if (rows.length === 0) return;
      const txs: TxRecord[] = [];
      for (const r of rows) txs.push(await this.store.expireIfDue(rowToTx(r)));
      yield txs;
      if (rows.length < pageSize) return;
      const last: Record<string, unknown> = rows[rows.length - 1];
      after = { c: String(last.created_at_text), i: String(last.id) };
    }
  }

  /**
   * A client token's own transaction, read for a subscription that is opening: such reads within ~20 ms share
   * one statement (every checkout page of a busy merchant opens one; nobody notices 20 ms before a live stream).
   */
  private readonly patientReads = new Batcher<string, Record<string, unknown> | null>(
    async (ids) => {
      const rows = await this.db.query(`select * from "transaction" where id = any(?::text[])`, [ids]);
      const byId = new Map(rows.map((r) => [r.id as string, r]));
      return ids.map((id) => byId.get(id) ?? null);
    },
    { lanes: 2, maxBatch: 64, refused: refusedByDatabase, lingerMs: 20 },
  );

  /**
   * One transaction the principal may see, expired on read if due; null otherwise (never "forbidden").
   * The scope is part of the lookup itself, so another key's transaction costs exactly what a missing one
   * does (no row is read and dropped; test/faults/input/isolation.test.ts measures it). `patient`: a client
   * token's read may wait for others to share its statement (a client token names the one id it may read).
   */
  async one(p: Principal, id: string, opts: { patient?: boolean } = {}): Promise<TxRecord | null> {
    if (p.type === "anonymous") throw unauthenticated();
    if (p.type === "client" && id !== p.transactionId) return null;
    if (p.type === "client" && opts.patient === true) {
      const row = await this.patientReads.add(id);
      return row === null ? null : this.store.expireIfDue(rowToTx(row));
    }
    const rows =
      p.type === "key"
        ? await this.db.query(
            `select ${TX_COLUMNS} from "transaction" where id = ? and api_key_ref = ?`,
            [id, p.keyId],
            "pqr_one_for_key",
          )
        : await this.db.query(`select ${TX_COLUMNS} from "transaction" where id = ?`, [id], "pqr_one");
    return rows.length === 0 ? null : this.store.expireIfDue(rowToTx(rows[0]));
  }

  private scope(p: Principal, add: (sql: string, ...v: unknown[]) => void): void {
    if (p.type === "anonymous") throw unauthenticated();
    if (p.type === "key") add("api_key_ref = ?", p.keyId);
    else if (p.type === "client") add("id = ?", p.transactionId);
  }

  private filters(f: TransactionFilter, add: (sql: string, ...v: unknown[]) => void): void {
    const now = this.clock.now();
    if (f.area !== undefined && f.area !== null) add("area = ?", f.area);
    if (f.merchantId !== undefined) add("merchant_ref = ?", f.merchantId);
    // Status as reads show it: a non-terminal row past its expiry (plus its area's grace) counts as EXPIRED.
    const { sql: due, params: grace } = dueSql(this.store);
    if (f.status === "PENDING" || f.status === "CHECKOUT") add(`status = ? and ${due} > ?`, f.status, ...grace, now);
    else if (f.status === "EXPIRED")
      add(`(status = 'EXPIRED' or (status in ('PENDING','CHECKOUT') and ${due} <= ?))`, ...grace, now);
    else if (f.status !== undefined && f.status !== null) add("status = ?", f.status);
    if (f.createdFrom instanceof Date) add("created_at >= ?", f.createdFrom);
    if (f.createdTo instanceof Date) add("created_at < ?", f.createdTo);
    if (f.latePayment === true) add(`status = 'SUCCESS' and ${LATE_SQL}`);
    else if (f.latePayment === false) add(`not (${LATE_SQL})`);
    if (f.mismatched === true) add(heldSql());
    else if (f.mismatched === false) add(`not ${heldSql()}`);
    const s = f.search?.trim();
    if (s) {
      checkArgument("filter.search", s, SEARCH, "search is too long");
      // The id, and the upstream identifier of the areas that have theirs searched (AreaDefinition.data.ref).
      const views = this.store.views;
      add(
        "(id like ? or (area = any(?::text[]) and upstream_ref like ?) or (area = any(?::text[]) and upstream_ref like ?))",
        likePrefix(s),
        views.searched("as-typed"),
        likePrefix(s),
        views.searched("lowercased"),
        likePrefix(s.toLowerCase()),
      );
    }
  }
}

function unauthenticated(): AppError {
  return new AppError("UNAUTHENTICATED", "An API key, client token or admin token is required");
}
