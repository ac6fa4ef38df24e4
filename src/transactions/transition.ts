import type { Clock } from "../clock.js";
import { currentClaim, type IdempotencyClaim } from "./idempotency.js";
import { newId } from "../ids.js";
import { Db } from "../db/sql.js";
import type { EventSink, StoredEvent } from "./stored-event.js";
import { rowToTx, snapshot, type TxRecord } from "./record.js";
import { AreaViews } from "./area-views.js";
import type { EventType } from "./transaction-event.entity.js";
import { TERMINAL, type Json, type TxStatus } from "./transaction.entity.js";
import {
  NOTIFY_CHANNEL,
  outboxCounts,
  outboxCtes,
  outboxManySql,
  rowToEvent,
  type OutboxFanout,
} from "./outbox-sql.js";
import { Batcher, refusedByDatabase } from "../db/batcher.js";
import { heldSql, isHeld, type MismatchRecord, type MismatchResolution } from "./mismatch.js";
import { AppError } from "../errors.js";
import { stringifyExact } from "../exact-json.js";
import { canonicalDecimal, twoDecimals } from "../money/money.js";

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
  /** The upstream's identifier of the payment (the area's own, e.g. its order id), if it has one yet. */
  upstreamRef?: string | null;
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
  /** New status; omitted for visible changes that keep the status (the area's own news). */
  to?: TxStatus;
  /** Merged into the `upstream` JSON column (payer info, the area's own keys, …). */
  upstream?: Json;
  /** Sets the upstream's identifier of the payment where it was not known yet (a null keeps what the row has). */
  upstreamRef?: string | null;
  /**
   * A late payment (generic QR area, docs/decisions/0107-late-payments.md): the one move out of EXPIRED, to
   * SUCCESS as `payment.completed`, when the network shows a payment after the transaction was declared expired.
   * Also allowed from a non-terminal state (paid after expiry, seen during the grace). Recorded as `upstream.late`.
   */
  late?: boolean;
  /** With a terminal change: when the late watch looks at the transaction again (default: never). */
  nextCheckAt?: Date | null;
  /**
   * A payment that arrived but is not what was asked (docs/decisions/0183-held-payments.md): event
   * `payment.mismatched`, no `to` (the status is kept), the record stored as `upstream.mismatch`, and no more checks
   * (next_check_at null). From then on the transaction is held: nothing changes it but an operator's `resolution`.
   * With `late`, also from EXPIRED (a late payment that differs).
   */
  mismatch?: MismatchRecord;
  /**
   * An operator's resolution of a held transaction, the only change it takes (SUCCESS as payment.completed or FAILED
   * as payment.failed): stored as `upstream.mismatch.resolution`. Refused for a transaction that is not held.
   */
  resolution?: MismatchResolution;
}

/** How an area's transactions expire (only the generic QR area has one; the others expire at `expiresAt`). */
export interface ExpiryPolicy {
  /** Past expiry, a transaction waits this long for a check that answers "not paid"; then it expires anyway. */
  graceMs: number;
  /** After expiry, a late payment is still looked for this long (0: never). */
  lateWatchMs: number;
  /** How often the late watch checks. */
  lateCheckMs: number;
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
export const TX_COLUMNS = `id, area, merchant_ref, api_key_ref, status, amount, currency, upstream_ref, qr, meta, request, upstream,
  expires_at, created_at, updated_at, completed_at, next_check_at, check_failures, version`;

/**
 * Creation of any number of transactions in one statement: the rows, each one's payment.created outbox
 * event, their delivery rows and one notify. Every column comes as an array (one element per transaction),
 * so the text is constant and prepared once per connection whatever the batch size.
 */
const createManySql = (fanout: OutboxFanout | null) => `with input as (
    select * from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::numeric[], ?::text[], ?::text[],
      ?::text[],
      ?::json[], ?::jsonb[], ?::jsonb[], ?::timestamptz[], ?::timestamptz[], ?::timestamptz[], ?::text[], ?::json[], ?::int[],
      ?::text[], ?::text[])
      as i(id, area, merchant_ref, api_key_ref, status, amount, currency, upstream_ref, qr, meta, request, upstream,
        expires_at, created_at, next_check_at, ev_id, payload, ord, idem_key_ref, idem_key)),
  tx as (
    insert into "transaction" (id, area, merchant_ref, api_key_ref, status, amount, currency, upstream_ref, qr,
      meta, request, upstream, expires_at, created_at, updated_at, next_check_at)
    select id, area, merchant_ref, api_key_ref, status, amount, currency, upstream_ref, qr,
      meta, request, upstream, expires_at, created_at, created_at, next_check_at
    from input order by ord
    returning id),
  idem as (
    update idempotency_key k set transaction_ref = i.id from input i join tx on tx.id = i.id
    where i.idem_key is not null and k.api_key_ref = i.idem_key_ref and k.key = i.idem_key),
  src as (select i.*, 'payment.created'::text as ev_type from input i join tx on tx.id = i.id order by i.ord),
  ${outboxCtes("src", fanout)}
  select ev.id, ev.seq::text as seq, ${outboxCounts(fanout)} from ev`;

/** Up to this many creates share a statement; two statements in flight keep the pool and PostgreSQL busy. */
const CREATE_BATCH = { lanes: 2, maxBatch: 64 };
const TRANSITION_BATCH = { lanes: 2, maxBatch: 32 };

interface PendingTransition {
  id: string;
  /** One element of each of TRANSITION_MANY_SQL's arrays, after the id. */
  columns: [string | null, string, string | null, Date, boolean, Date | null, boolean, boolean, boolean];
  eventId: string;
  event: EventType;
  now: Date;
}

interface PendingCreate {
  draft: TxRecord;
  event: StoredEvent;
  /** The Idempotency-Key claim of the request, which this create's statement marks with the transaction id. */
  claim: IdempotencyClaim | null;
}

/**
 * Any number of transitions of distinct transactions in one statement (the same text whatever the batch size,
 * prepared once per connection). Rows are locked in id order first, so two groups in two processes that share
 * transactions wait for each other instead of deadlocking. Each item changes its row only from a non-terminal
 * state (or, for a late payment, from EXPIRED); a row that does not qualify is not returned. A held row (a payment that
 * differs from what was asked, not resolved yet) takes nothing but a resolution, and a resolution nothing else;
 * a hold stops the checks (next_check_at null).
 */
const TRANSITION_MANY_SQL = `with input as (
    select * from unnest(?::text[], ?::text[], ?::jsonb[], ?::text[], ?::timestamptz[], ?::boolean[],
      ?::timestamptz[], ?::boolean[], ?::boolean[], ?::boolean[])
      as i(id, status, upstream, upstream_ref, now, terminal, next_check_at, late_payment, hold, resolve)),
  locked as (select t.id from "transaction" t join input i on i.id = t.id order by t.id for update of t)
  update "transaction" t set
    status = coalesce(i.status, t.status),
    upstream = case when i.resolve
      then jsonb_set(t.upstream || (i.upstream - 'resolution'), '{mismatch,resolution}', i.upstream -> 'resolution')
      else t.upstream || i.upstream end,
    upstream_ref = coalesce(i.upstream_ref, t.upstream_ref),
    updated_at = i.now,
    completed_at = case when i.terminal then i.now else t.completed_at end,
    next_check_at = case when i.terminal or i.hold then i.next_check_at else t.next_check_at end,
    version = t.version + 1
  from input i join locked l on l.id = i.id
  where t.id = i.id and case when i.resolve then ${heldSql("t")} and t.status in ('PENDING','CHECKOUT','EXPIRED')
    else not ${heldSql("t")} and (t.status in ${NON_TERMINAL_SQL}
      or (i.late_payment and t.status = 'EXPIRED')) end
  returning ${TX_COLUMNS.split(",")
    .map((c) => `t.${c.trim()}`)
    .join(", ")}`;

/**
 * The row a new transaction reads back as, built before the insert so its snapshot can go into the same
 * statement as the outbox payload. Every column is given or a fixed default; numeric(20,2) always shows two
 * decimals. A test pins that this equals the row read back.
 */
function newRecord(input: NewTransaction, now: Date): TxRecord {
  if (!AMOUNT_RE.test(input.amount))
    throw new Error(`amount ${input.amount} is not an exact decimal with at most 2 decimals`);
  return {
    id: input.id,
    area: input.area,
    merchantRef: input.merchantRef,
    apiKeyRef: input.apiKeyRef,
    status: input.status,
    amount: twoDecimals(canonicalDecimal(input.amount) ?? input.amount),
    currency: input.currency,
    upstreamRef: input.upstreamRef ?? null,
    qr: input.qr ?? null,
    meta: input.meta ?? {},
    request: input.request ?? {},
    upstream: input.upstream ?? {},
    expiresAt: input.expiresAt,
    createdAt: now,
    updatedAt: now,
    completedAt: null,
    nextCheckAt: input.nextCheckAt ?? null,
    checkFailures: 0,
    version: 1,
  };
}

/**
 * The only code that writes a transaction's status (docs/architecture.md, "The path of a status change"). Every change is one database
 * transaction: the conditional update (only from a non-terminal state, so two workers can never both
 * win), the outbox event, a delivery row for every matching webhook endpoint, and pg_notify. Creation
 * is a single statement (insert + outbox, atomic on its own), shared by the creates that arrive together
 * (db/batcher.ts: one round trip, commit and notify for many on the hot generate path); a transition is
 * the update plus one outbox statement inside BEGIN/COMMIT, and concurrent transitions share one BEGIN/COMMIT
 * (each keeps its own statements and outcome). After commit the event is published in-process.
 */
export class TransactionStore {
  constructor(
    private readonly db: Db,
    private readonly bus: EventSink,
    private readonly clock: Clock,
    /** Rows another module writes with every event (the webhooks module's deliveries; app.ts passes it). */
    fanout: OutboxFanout | null = null,
    /** Areas whose expiry waits for a check or has a late watch (each area declares it; app.ts collects them). */
    private readonly expiry: Partial<Record<TxRecord["area"], ExpiryPolicy>> = {},
    /** What the areas show of their transactions (the snapshot's area keys; app.ts builds it from its areas). */
    readonly views: AreaViews = new AreaViews(),
  ) {
    this.createManySql = createManySql(fanout);
    this.outboxManySql = outboxManySql(fanout);
  }

  private readonly createManySql: string;
  private readonly outboxManySql: string;

  /**
   * Concurrent transitions, grouped into one database transaction (db/batcher.ts): each keeps its own
   * conditional update and outbox statement, and the group shares BEGIN, COMMIT and the commit's WAL flush
   * (a checked batch of the monitor commits its payments together). Alone at once when nothing is in flight.
   */
  private readonly transitions = new Batcher<PendingTransition, { tx: TxRecord; event: StoredEvent } | null>(
    (items) => this.transitionMany(items),
    // A group is one database transaction: whatever fails inside it before COMMIT (the database's refusal, or
    // ours of unstorable text) rolled all of it back, so each item is tried again alone.
    { ...TRANSITION_BATCH, refused: (err) => err instanceof AppError || refusedByDatabase(err) },
  );

  private async transitionMany(items: PendingTransition[]): Promise<({ tx: TxRecord; event: StoredEvent } | null)[]> {
    // A transaction changed twice in one group changes in rounds, in arrival order: a statement updates a row once.
    const rounds: number[][] = [];
    const seen = new Map<string, number>();
    items.forEach((it, i) => {
      const round = seen.get(it.id) ?? 0;
      seen.set(it.id, round + 1);
      (rounds[round] ??= []).push(i);
    });
    return this.db.transaction(async (q) => {
      // The group's winners, in the order their events take sequence numbers.
      const won: { i: number; tx: TxRecord }[] = [];
      for (const round of rounds) {
        const column = (k: number) => round.map((i) => items[i].columns[k]);
        const rows = await q(
          TRANSITION_MANY_SQL,
          [round.map((i) => items[i].id), ...items[0].columns.map((_, k) => column(k))],
          "pqr_transition_many",
        );
        const byId = new Map(rows.map((r) => [r.id as string, rowToTx(r)]));
        for (const i of round) {
          const tx = byId.get(items[i].id);
          if (tx !== undefined) won.push({ i, tx });
        }
      }
      const out: ({ tx: TxRecord; event: StoredEvent } | null)[] = items.map(() => null);
      if (won.length === 0) return out;
      const col = <T>(f: (w: (typeof won)[number], it: PendingTransition) => T) => won.map((w) => f(w, items[w.i]));
      const rows = await q(
        this.outboxManySql,
        [
          col((w) => w.tx.id),
          col((w) => w.tx.apiKeyRef),
          col((w) => w.tx.area),
          col((w) => w.tx.status),
          col((_, it) => it.eventId),
          col((_, it) => it.event),
          col((w) => stringifyExact({ transaction: snapshot(w.tx, this.views), meta: w.tx.meta })),
          col((_, it) => it.now),
          NOTIFY_CHANNEL,
        ],
        "pqr_outbox_many",
      );
      const byEvent = new Map(rows.map((r) => [r.id as string, rowToEvent(r)]));
      for (const w of won) {
        const event = byEvent.get(items[w.i].eventId);
        if (event === undefined) throw new Error(`event ${items[w.i].eventId} was not written`);
        out[w.i] = { tx: w.tx, event };
      }
      return out;
    });
  }

  /** Concurrent creates, grouped into shared statements (db/batcher.ts). */
  private readonly creates = new Batcher<PendingCreate, StoredEvent>((items) => this.createMany(items), {
    ...CREATE_BATCH,
    refused: refusedByDatabase,
  });

  async create(input: NewTransaction): Promise<{ tx: TxRecord; event: StoredEvent }> {
    const now = this.clock.now();
    const draft = newRecord(input, now);
    const eventId = newId("evt");
    const pending: StoredEvent = {
      seq: "",
      id: eventId,
      transactionId: draft.id,
      apiKeyRef: draft.apiKeyRef,
      area: draft.area,
      type: "payment.created",
      status: draft.status,
      payload: { transaction: snapshot(draft, this.views), meta: draft.meta },
      createdAt: now,
    };
    const event = await this.committing(eventId, () =>
      this.creates.add({ draft, event: pending, claim: currentClaim() }),
    );
    this.bus.publish(event);
    return { tx: draft, event };
  }

  private async createMany(items: PendingCreate[]): Promise<StoredEvent[]> {
    const col = <T>(f: (p: PendingCreate, i: number) => T) => items.map(f);
    const rows = await this.db.query<{ id: string; seq: string; deliveries: number }>(
      this.createManySql,
      [
        col((p) => p.draft.id),
        col((p) => p.draft.area),
        col((p) => p.draft.merchantRef),
        col((p) => p.draft.apiKeyRef),
        col((p) => p.draft.status),
        col((p) => p.draft.amount),
        col((p) => p.draft.currency),
        col((p) => p.draft.upstreamRef),
        col((p) => p.draft.qr),
        col((p) => stringifyExact(p.draft.meta)),
        col((p) => JSON.stringify(p.draft.request)),
        col((p) => JSON.stringify(p.draft.upstream)),
        col((p) => p.draft.expiresAt),
        col((p) => p.draft.createdAt),
        col((p) => p.draft.nextCheckAt),
        col((p) => p.event.id),
        col((p) => stringifyExact(p.event.payload)),
        col((_, i) => i),
        col((p) => p.claim?.keyId ?? null),
        col((p) => p.claim?.key ?? null),
        NOTIFY_CHANNEL,
      ],
      "pqr_create_many",
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return items.map((p) => {
      const row = byId.get(p.event.id);
      if (row === undefined) throw new Error(`event ${p.event.id} was not written`);
      return { ...p.event, seq: row.seq, deliveries: Number(row.deliveries) };
    });
  }

  async transition(req: TransitionRequest): Promise<TransitionResult> {
    const now = this.clock.now();
    const terminal = req.to !== undefined && TERMINAL.includes(req.to);
    const latePayment = req.late === true && req.to === "SUCCESS" && req.event === "payment.completed";
    const hold = req.mismatch !== undefined && req.to === undefined && req.event === "payment.mismatched";
    const resolve = req.resolution !== undefined && terminal;
    const lateHold = hold && req.late === true;
    const upstream: Json = latePayment ? { ...(req.upstream ?? {}), late: true } : { ...(req.upstream ?? {}) };
    if (hold) upstream.mismatch = { ...req.mismatch, ...(lateHold ? { late: true } : {}) };
    if (resolve) upstream.resolution = req.resolution;
    const eventId = newId("evt");
    const columns: PendingTransition["columns"] = [
      req.to ?? null,
      JSON.stringify(upstream),
      req.upstreamRef ?? null,
      now,
      terminal,
      terminal ? (req.nextCheckAt ?? null) : null,
      latePayment || lateHold,
      hold,
      resolve,
    ];
    const result = await this.committing(eventId, () =>
      this.transitions.add({ id: req.id, columns, eventId, event: req.event, now }),
    );
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
  async findForKey(
    apiKeyRef: string,
    by: { id: string; area: TxRecord["area"] } | { upstreamRef: string; area: TxRecord["area"] },
  ): Promise<TxRecord | null> {
    const [col, val] = "id" in by ? ["id", by.id] : ["upstream_ref", by.upstreamRef];
    // Prepared (one text per column): a check's planning cost PostgreSQL more than running it (0243).
    const rows = await this.db.query(
      `select ${TX_COLUMNS} from "transaction" where ${col} = ? and api_key_ref = ? and area = ?
       order by created_at desc limit 1`,
      [val, apiKeyRef, by.area],
      `pqr_find_for_key_${col}`,
    );
    return rows.length === 0 ? null : this.expireIfDue(rowToTx(rows[0]));
  }

  /** Whether the merchant has a transaction of this upstream identifier in an area already (e.g. an order id). */
  async upstreamRefExists(merchantRef: string, upstreamRef: string, area: TxRecord["area"]): Promise<boolean> {
    const rows = await this.db.query(
      `select 1 from "transaction" where merchant_ref = ? and upstream_ref = ? and area = ?`,
      [merchantRef, upstreamRef, area],
    );
    return rows.length > 0;
  }

  /**
   * Expires a non-terminal transaction on read once it is past its expiry — for an area with an expiry
   * policy, past its expiry plus the grace (until then only a check that answers may expire it).
   */
  async expireIfDue(tx: TxRecord): Promise<TxRecord> {
    const now = this.clock.now();
    // A held payment (money arrived, not what was asked) waits for an operator, past its expiry too (0183).
    if (TERMINAL.includes(tx.status) || isHeld(tx) || tx.expiresAt.getTime() + this.graceMs(tx.area) > now.getTime())
      return tx;
    const nextCheckAt = this.lateWatchNext(tx.area, now);
    return (await this.transition({ id: tx.id, to: "EXPIRED", event: "payment.expired", nextCheckAt })).tx;
  }

  /** How long past expiry an area's transaction waits for an answering check (0 for most areas). */
  graceMs(area: TxRecord["area"]): number {
    return this.expiry[area]?.graceMs ?? 0;
  }

  /** Every area with a grace, and that grace (the read model's status filter counts it). */
  graces(): [area: string, graceMs: number][] {
    return Object.entries(this.expiry).flatMap(([area, p]) =>
      p !== undefined && p.graceMs > 0 ? [[area, p.graceMs]] : [],
    );
  }

  /** The area's expiry policy, if it has one. */
  expiryPolicy(area: TxRecord["area"]): ExpiryPolicy | null {
    return this.expiry[area] ?? null;
  }

  /** When an area's transaction that expires now is first checked for a late payment (null: no late watch). */
  lateWatchNext(area: TxRecord["area"], now: Date): Date | null {
    const policy = this.expiry[area];
    return policy !== undefined && policy.lateWatchMs > 0 ? new Date(now.getTime() + policy.lateCheckMs) : null;
  }

  async eventsSince(
    filter: { transactionId?: string; apiKeyRef?: string; all?: true; afterSeq: string },
    limit = 500,
  ): Promise<StoredEvent[]> {
    const [where, param] =
      filter.transactionId !== undefined
        ? ["transaction_ref = ?", filter.transactionId]
        : filter.apiKeyRef !== undefined
          ? ["api_key_ref = ?", filter.apiKeyRef]
          : ["?::text is null", null];
    const rows = await this.db.query(
      `select * from transaction_event where ${where} and seq > ?::bigint order by seq limit ?`,
      [param, filter.afterSeq, limit],
    );
    return rows.map((r) => rowToEvent(r));
  }

  /** One transaction's latest event: its current state as subscribers and webhooks saw it. */
  async latestEventOf(transactionId: string): Promise<StoredEvent | null> {
    const rows = await this.db.query(
      `select * from transaction_event where transaction_ref = ? order by seq desc limit 1`,
      [transactionId],
    );
    return rows.length === 0 ? null : rowToEvent(rows[0]);
  }

  async latestSeq(): Promise<string> {
    const rows = await this.db.query<{ seq: string | null }>(`select max(seq)::text as seq from transaction_event`);
    return rows[0]?.seq ?? "0";
  }

  async eventsAfter(afterSeq: string, limit: number): Promise<StoredEvent[]> {
    const rows = await this.db.query(`select * from transaction_event where seq > ?::bigint order by seq limit ?`, [
      afterSeq,
      limit,
    ]);
    return rows.map((r) => rowToEvent(r));
  }

  async eventById(id: string): Promise<StoredEvent | null> {
    const rows = await this.db.query(`select * from transaction_event where id = ?`, [id]);
    return rows.length === 0 ? null : rowToEvent(rows[0]);
  }

  /** Several outbox rows in one query, in sequence order (what the listener was notified of meanwhile). */
  async eventsByIds(ids: string[]): Promise<StoredEvent[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query(
      `select * from transaction_event where id in (${ids.map(() => "?").join(",")}) order by seq`,
      ids,
    );
    return rows.map((r) => rowToEvent(r));
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
      void this.eventById(eventId).then(
        (e) => e && this.bus.publish(e),
        () => undefined,
      );
      throw err;
    }
  }
}
