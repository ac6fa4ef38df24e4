import type { Clock } from "../clock.js";
import { newId } from "../ids.js";
import { Db, type Query, toDate } from "../db/sql.js";
import type { EventBus, StoredEvent } from "./event-bus.js";
import { rowToTx, snapshot, type TxRecord } from "./record.js";
import type { EventType } from "./transaction-event.entity.js";
import { TERMINAL, type Json, type TxStatus } from "./transaction.entity.js";

export const NOTIFY_CHANNEL = "pqr_events";

export interface NewTransaction {
  id: string;
  area: TxRecord["area"];
  merchantRef: string;
  apiKeyRef: string;
  status: "PENDING" | "CHECKOUT";
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

function rowToEvent(r: Record<string, unknown>): StoredEvent {
  return {
    seq: String(r.seq),
    id: r.id as string,
    transactionId: r.transaction_ref as string,
    apiKeyRef: r.api_key_ref as string,
    area: r.area as string,
    type: r.type as EventType,
    status: r.status as string,
    payload: r.payload as Json,
    createdAt: toDate(r.created_at),
  };
}

/**
 * The only code that writes a transaction's status (STYLE.md §4). Every change is one database
 * transaction: the conditional update (only from a non-terminal state, so two workers can never both
 * win), the outbox event, a delivery row for every matching webhook endpoint, and pg_notify. After
 * commit the event is published in-process.
 */
export class TransactionStore {
  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly clock: Clock,
  ) {}

  async create(input: NewTransaction): Promise<{ tx: TxRecord; event: StoredEvent }> {
    const now = this.clock.now();
    const result = await this.db.transaction(async (q) => {
      const rows = await q(
        `insert into "transaction" (id, area, merchant_ref, api_key_ref, status, amount, currency, order_id, md5, client_id, qr,
           meta, request, upstream, expires_at, created_at, updated_at, next_check_at)
         values (?,?,?,?,?,?,?,?,?,?,?,?::jsonb,?::jsonb,?::jsonb,?,?,?,?) returning *`,
        [
          input.id, input.area, input.merchantRef, input.apiKeyRef, input.status, input.amount, input.currency,
          input.orderId ?? null, input.md5 ?? null, input.clientId ?? null, input.qr ?? null,
          JSON.stringify(input.meta ?? {}), JSON.stringify(input.request ?? {}), JSON.stringify(input.upstream ?? {}),
          input.expiresAt, now, now, input.nextCheckAt ?? null,
        ],
      );
      const tx = rowToTx(rows[0]);
      const event = await this.writeEvent(q, tx, "payment.created", now);
      return { tx, event };
    });
    this.bus.publish(result.event);
    return result;
  }

  async transition(req: TransitionRequest): Promise<TransitionResult> {
    const now = this.clock.now();
    const terminal = req.to !== undefined && TERMINAL.includes(req.to);
    const result = await this.db.transaction(async (q) => {
      const rows = await q(
        `update "transaction" set
           status = coalesce(?, status),
           upstream = upstream || ?::jsonb,
           receipt_url = coalesce(?, receipt_url),
           client_id = coalesce(?, client_id),
           updated_at = ?,
           completed_at = case when ? then ? else completed_at end,
           next_check_at = case when ? then null else next_check_at end,
           version = version + 1
         where id = ? and status in ${NON_TERMINAL_SQL}
         returning *`,
        [req.to ?? null, JSON.stringify(req.upstream ?? {}), req.receiptUrl ?? null, req.clientId ?? null, now, terminal, now, terminal, req.id],
      );
      if (rows.length === 0) return null;
      const tx = rowToTx(rows[0]);
      return { tx, event: await this.writeEvent(q, tx, req.event, now) };
    });
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
    const [where, param] = filter.transactionId !== undefined ? ["transaction_ref = ?", filter.transactionId] : filter.apiKeyRef !== undefined ? ["api_key_ref = ?", filter.apiKeyRef] : ["? is null", null];
    const rows = await this.db.query(
      `select * from transaction_event where ${where} and seq > ?::bigint order by seq limit ?`,
      [param, filter.afterSeq, limit],
    );
    return rows.map(rowToEvent);
  }

  async latestSeq(): Promise<string> {
    const rows = await this.db.query<{ seq: string | null }>(`select max(seq)::text as seq from transaction_event`);
    return rows[0]?.seq ?? "0";
  }

  async eventsAfter(afterSeq: string, limit: number): Promise<StoredEvent[]> {
    const rows = await this.db.query(`select * from transaction_event where seq > ?::bigint order by seq limit ?`, [afterSeq, limit]);
    return rows.map(rowToEvent);
  }

  async eventById(id: string): Promise<StoredEvent | null> {
    const rows = await this.db.query(`select * from transaction_event where id = ?`, [id]);
    return rows.length === 0 ? null : rowToEvent(rows[0]);
  }

  /** Several outbox rows in one query, in sequence order (what the listener was notified of meanwhile). */
  async eventsByIds(ids: string[]): Promise<StoredEvent[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query(`select * from transaction_event where id in (${ids.map(() => "?").join(",")}) order by seq`, ids);
    return rows.map(rowToEvent);
  }

  private async writeEvent(q: Query, tx: TxRecord, type: EventType, now: Date): Promise<StoredEvent> {
    const id = newId("evt");
    const payload = { transaction: snapshot(tx), meta: tx.meta };
    const rows = await q(
      `insert into transaction_event (id, transaction_ref, api_key_ref, area, type, status, payload, created_at)
       values (?,?,?,?,?,?,?::jsonb,?) returning *`,
      [id, tx.id, tx.apiKeyRef, tx.area, type, tx.status, JSON.stringify(payload), now],
    );
    await q(
      `insert into webhook_delivery (id, event_ref, endpoint_ref, state, attempts, next_attempt_at, created_at)
       select 'whd_' || replace(gen_random_uuid()::text, '-', ''), ?, e.id, 'pending', 0, ?, ?
       from webhook_endpoint e
       where e.api_key_ref = ? and e.enabled and (jsonb_array_length(e.events) = 0 or e.events @> to_jsonb(?::text))`,
      [id, now, now, tx.apiKeyRef, type],
    );
    await q(`select pg_notify(?, ?)`, [NOTIFY_CHANNEL, id]);
    return rowToEvent(rows[0]);
  }
}
