import type { Clock } from "../clock.js";
import { newId } from "../ids.js";
import { Db, type Query } from "../db/sql.js";
import type { EventBus, StoredEvent } from "./event-bus.js";
import { rowToTx, snapshot, type TxRecord } from "./record.js";
import type { EventType } from "./transaction-event.entity.js";
import { TERMINAL, type Json, type TxStatus } from "./transaction.entity.js";
import { NOTIFY_CHANNEL, OUTBOX_COUNTS, OUTBOX_FOR_ROW_SQL, outboxCtes, outboxParams, rowToEvent } from "./outbox-sql.js";

export { NOTIFY_CHANNEL };

export interface NewTransaction {
  id: string;
  area: TxRecord["area"];
  merchantRef: string;
  apiKeyRef: string;
  status: "PENDING" | "CHECKOUT";
  /** Exact decimal with at most 2 decimals (what the services validate). */
  amount: string;
  currency: "USD" | "KHR";
  orderId?: string | null;
  md5?: string | null;
  clientId?: string | null;
  qr?: string | null;
  meta?: Json;
  request?: Json;
  upstream?: Json;
  expiresAt: Date;
  nextCheckAt?: Date | null;
}

export interface TransitionRequest {
  id: string;
  event: EventType;
  /** New status; omitted for visible changes that keep the status (scanned, receipt arrived). */
  to?: TxStatus;
  /** Merged into the `upstream` JSON column (payer info, gatewayStatus, …). */
  upstream?: Json;
  receiptUrl?: string | null;
  clientId?: string | null;
}

export interface TransitionResult {
  /** False when the transaction was already terminal (another worker won, or it ended earlier). */
  won: boolean;
  tx: TxRecord;
  event: StoredEvent | null;
}

const NON_TERMINAL_SQL = "('PENDING','CHECKOUT')";
const AMOUNT_RE = /^\d+(\.\d{1,2})?$/;

/** Every column, named: the hot statements are prepared, and a prepared `*` fails once a migration adds one. */
const TX_COLUMNS = `id, area, merchant_ref, api_key_ref, status, amount, currency, order_id, md5, client_id, qr, meta, request, upstream,
  receipt_url, expires_at, created_at, updated_at, completed_at, next_check_at, check_failures, version`;

const INSERT_TX_SQL = `insert into "transaction" (id, area, merchant_ref, api_key_ref, status, amount, currency, order_id, md5, client_id, qr,
    meta, request, upstream, expires_at, created_at, updated_at, next_check_at)
  values (?,?,?,?,?,?,?,?,?,?,?,?::jsonb,?::jsonb,?::jsonb,?,?,?,?) returning ${TX_COLUMNS}`;

/** Creation is one statement: the row, its payment.created outbox event, its delivery rows and the notify. */
const CREATE_SQL = `with tx as (${INSERT_TX_SQL}),
  ${outboxCtes("tx")}
  select ${TX_COLUMNS.split(",").map((c) => `tx.${c.trim()}`).join(", ")},
    ev.seq as ev_seq, ev.id as ev_id, ev.transaction_ref as ev_transaction_ref, ev.api_key_ref as ev_api_key_ref, ev.area as ev_area,
    ev.type as ev_type, ev.status as ev_status, ev.payload as ev_payload, ev.created_at as ev_created_at, ${OUTBOX_COUNTS}
  from tx cross join ev`;

const TRANSITION_SQL = `update "transaction" set
    status = coalesce(?, status),
    upstream = upstream || ?::jsonb,
    receipt_url = coalesce(?, receipt_url),
    client_id = coalesce(?, client_id),
    updated_at = ?,
    completed_at = case when ? then ? else completed_at end,
    next_check_at = case when ? then null else next_check_at end,
    version = version + 1
  where id = ? and status in ${NON_TERMINAL_SQL}
  returning ${TX_COLUMNS}`;

/**
 * The row a new transaction reads back as, built before the insert so its snapshot can go into the same
 * statement as the outbox payload. Every column is given or a fixed default; numeric(20,2) always shows two
 * decimals. A test pins that this equals the row read back.
 */
function newRecord(input: NewTransaction, now: Date): TxRecord {
  if (!AMOUNT_RE.test(input.amount)) throw new Error(`amount ${input.amount} is not an exact decimal with at most 2 decimals`);
  const [whole, fraction = ""] = input.amount.split(".");
  return {
    id: input.id, area: input.area, merchantRef: input.merchantRef, apiKeyRef: input.apiKeyRef, status: input.status,
    amount: `${whole.replace(/^0+(?=\d)/, "")}.${fraction.padEnd(2, "0")}`, currency: input.currency,
    orderId: input.orderId ?? null, md5: input.md5 ?? null, clientId: input.clientId ?? null, qr: input.qr ?? null,
    meta: input.meta ?? {}, request: input.request ?? {}, upstream: input.upstream ?? {}, receiptUrl: null,
    expiresAt: input.expiresAt, createdAt: now, updatedAt: now, completedAt: null, nextCheckAt: input.nextCheckAt ?? null, checkFailures: 0, version: 1,
  };
}

/**
 * The only code that writes a transaction's status (STYLE.md §4). Every change is one database
 * transaction: the conditional update (only from a non-terminal state, so two workers can never both
 * win), the outbox event, a delivery row for every matching webhook endpoint, and pg_notify. Creation
 * is a single statement (insert + outbox, atomic on its own: one round trip on the hot generate path);
 * a transition is the update plus one outbox statement inside BEGIN/COMMIT. After commit the event is
 * published in-process.
 */
export class TransactionStore {
  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly clock: Clock,
  ) {}

  async create(input: NewTransaction): Promise<{ tx: TxRecord; event: StoredEvent }> {
    const now = this.clock.now();
    const draft = newRecord(input, now);
    const eventId = newId("evt");
    const rows = await this.committing(eventId, () => this.db.query(CREATE_SQL, [
      input.id, input.area, input.merchantRef, input.apiKeyRef, input.status, input.amount, input.currency,
      draft.orderId, draft.md5, draft.clientId, draft.qr, JSON.stringify(draft.meta), JSON.stringify(draft.request), JSON.stringify(draft.upstream),
      input.expiresAt, now, now, draft.nextCheckAt,
      ...outboxParams(eventId, "payment.created", { transaction: snapshot(draft), meta: draft.meta }, now), NOTIFY_CHANNEL,
    ], "pqr_create"));
    const result = { tx: rowToTx(rows[0]), event: rowToEvent(rows[0], "ev_") };
    this.bus.publish(result.event);
    return result;
  }

  async transition(req: TransitionRequest): Promise<TransitionResult> {
    const now = this.clock.now();
    const terminal = req.to !== undefined && TERMINAL.includes(req.to);
    const eventId = newId("evt");
    const result = await this.committing(eventId, () => this.db.transaction(async (q) => {
      const rows = await q(TRANSITION_SQL,
        [req.to ?? null, JSON.stringify(req.upstream ?? {}), req.receiptUrl ?? null, req.clientId ?? null, now, terminal, now, terminal, req.id], "pqr_transition");
      if (rows.length === 0) return null;
      const tx = rowToTx(rows[0]);
      return { tx, event: await this.writeEvent(q, tx, eventId, req.event, now) };
    }));
    if (result === null) this.bus.notCommittingLocally(eventId);
    if (result === null) {
      const current = await this.get(req.id);
      if (current === null) throw new Error(`transaction ${req.id} does not exist`);
      return { won: false, tx: current, event: null };
    }
    this.bus.publish(result.event);
    return { won: true, ...result };
  }

  async get(id: string): Promise<TxRecord | null> {
    const rows = await this.db.query(`select * from "transaction" where id = ?`, [id]);
    return rows.length === 0 ? null : rowToTx(rows[0]);
  }

  /**
   * Reads one of the caller's transactions. Another key's transaction is indistinguishable from a
   * missing one. A non-terminal transaction past its expiry is expired here, so no read ever shows it
   * pending after expiry, even with no worker running.
   */
  async findForKey(apiKeyRef: string, by: { id?: string; md5?: string; orderId?: string; area: TxRecord["area"] }): Promise<TxRecord | null> {
    const [col, val] = by.id !== undefined ? ["id", by.id] : by.md5 !== undefined ? ["md5", by.md5] : ["order_id", by.orderId];
    const rows = await this.db.query(
      `select * from "transaction" where ${col} = ? and api_key_ref = ? and area = ? order by created_at desc limit 1`,
      [val, apiKeyRef, by.area],
    );
    return rows.length === 0 ? null : this.expireIfDue(rowToTx(rows[0]));
  }

  async orderIdExists(merchantRef: string, orderId: string): Promise<boolean> {
    const rows = await this.db.query(`select 1 from "transaction" where merchant_ref = ? and order_id = ? and area = 'gateway'`, [merchantRef, orderId]);
    return rows.length > 0;
  }

  async expireIfDue(tx: TxRecord): Promise<TxRecord> {
    if (TERMINAL.includes(tx.status) || tx.expiresAt.getTime() > this.clock.now().getTime()) return tx;
    return (await this.transition({ id: tx.id, to: "EXPIRED", event: "payment.expired" })).tx;
  }

  async eventsSince(filter: { transactionId?: string; apiKeyRef?: string; all?: true; afterSeq: string }, limit = 500): Promise<StoredEvent[]> {
    const [where, param] = filter.transactionId !== undefined ? ["transaction_ref = ?", filter.transactionId] : filter.apiKeyRef !== undefined ? ["api_key_ref = ?", filter.apiKeyRef] : ["?::text is null", null];
    const rows = await this.db.query(
      `select * from transaction_event where ${where} and seq > ?::bigint order by seq limit ?`,
      [param, filter.afterSeq, limit],
    );
    return rows.map((r) => rowToEvent(r));
  }

  async latestSeq(): Promise<string> {
    const rows = await this.db.query<{ seq: string | null }>(`select max(seq)::text as seq from transaction_event`);
    return rows[0]?.seq ?? "0";
  }

  async eventsAfter(afterSeq: string, limit: number): Promise<StoredEvent[]> {
    const rows = await this.db.query(`select * from transaction_event where seq > ?::bigint order by seq limit ?`, [afterSeq, limit]);
    return rows.map((r) => rowToEvent(r));
  }

  async eventById(id: string): Promise<StoredEvent | null> {
    const rows = await this.db.query(`select * from transaction_event where id = ?`, [id]);
    return rows.length === 0 ? null : rowToEvent(rows[0]);
  }

  /** Several outbox rows in one query, in sequence order (what the listener was notified of meanwhile). */
  async eventsByIds(ids: string[]): Promise<StoredEvent[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query(`select * from transaction_event where id in (${ids.map(() => "?").join(",")}) order by seq`, ids);
    return rows.map((r) => rowToEvent(r));
  }

  private async writeEvent(q: Query, tx: TxRecord, eventId: string, type: EventType, now: Date): Promise<StoredEvent> {
    const payload = { transaction: snapshot(tx), meta: tx.meta };
    const rows = await q(OUTBOX_FOR_ROW_SQL, [tx.id, tx.apiKeyRef, tx.area, tx.status, ...outboxParams(eventId, type, payload, now), NOTIFY_CHANNEL], "pqr_outbox");
    return rowToEvent(rows[0]);
  }

  /**
   * Runs a write that commits event `eventId`, telling the bus so that the listener does not load the event
   * when its NOTIFY wins the race against the commit's answer. If the write fails, the commit may still have
   * happened (a connection lost after COMMIT): the event is then looked up and published all the same.
   */
  private async committing<T>(eventId: string, write: () => Promise<T>): Promise<T> {
    this.bus.committingLocally(eventId);
    try {
      return await write();
    } catch (err) {
      this.bus.notCommittingLocally(eventId);
      void this.eventById(eventId).then((e) => e && this.bus.publish(e), () => undefined);
      throw err;
    }
  }
}
