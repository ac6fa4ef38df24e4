import { AppError } from "../errors.js";
import { refuse } from "../validation/checker.js";
import type { Principal } from "../auth/principal.js";
import { bucketOf } from "../auth/rate-limit.js";
import type { EventBus, StoredEvent } from "./event-bus.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { TransactionQuery } from "../transactions/transaction-query.js";
import { EventStream } from "./event-stream.js";
import { FanOut, type Interest } from "./fan-out.js";
import type { ReplayBudget } from "./replay-budget.js";
import { TERMINAL, type TxStatus } from "../transactions/transaction.entity.js";

/** How far before lastEventId a resumed subscription looks, in sequence numbers and in time. */
const RESUME_MARGIN = 2000n;
const RESUME_WINDOW_MS = 30_000;

export interface LiveFilter {
  transactionId?: string;
  area?: string;
  status?: string;
  lastEventId?: string;
}

/**
 * Live events for one subscriber, scoped to what its principal may see: a key its own transactions, a
 * client token its one transaction, the operator everything. Replays from the outbox after `lastEventId`
 * without gaps (live events are buffered while the replay is read), then follows the bus.
 */
export class LiveEvents {
  private readonly fanOut: FanOut;

  constructor(
    private readonly store: TransactionStore,
    bus: EventBus,
    private readonly transactions: TransactionQuery,
    /** The most events one subscription replays from lastEventId (WS_MAX_REPLAY). */
    private readonly maxReplay = 1000,
    /** Events replayed per credential (WS_REPLAY_EVENTS_PER_MINUTE); null: unlimited. */
    private readonly replayBudget: ReplayBudget | null = null,
  ) {
    this.fanOut = new FanOut(bus);
  }

  /** Streams following the bus now (opened and not yet closed). */
  get listening(): number {
    return this.fanOut.size;
  }

  private visible(p: Principal, e: StoredEvent): boolean {
    if (p.type === "admin") return true;
    if (p.type === "key") return e.apiKeyRef === p.keyId;
    if (p.type === "client") return e.transactionId === p.transactionId;
    return false;
  }

  /**
   * Listening starts before anything is read, so an event committed while the transaction (or the replay) is read
   * is buffered, not missed. Read first, a payment that completed after the read but was published before the
   * listening began never reached the subscriber: it waited for a SUCCESS that had gone by (rare, as the window is
   * one statement's answer; test/events/opening-subscription.test.ts holds that answer to show it).
   */
  async open(p: Principal, f: LiveFilter): Promise<EventStream<StoredEvent>> {
    if (p.type === "anonymous")
      throw new AppError("UNAUTHENTICATED", "An API key, client token or admin token is required");
    if (p.type === "client" && f.transactionId === undefined)
      throw new AppError("UNAUTHENTICATED", "A client token can only follow its own transaction");
    const matches = (e: StoredEvent) =>
      this.visible(p, e) &&
      (f.transactionId === undefined || e.transactionId === f.transactionId) &&
      (f.area === undefined || e.area === f.area) &&
      (f.status === undefined || e.status === f.status);
    const stream = new EventStream<StoredEvent>();
    const buffered: StoredEvent[] = [];
    let emit: ((e: StoredEvent) => void) | null = null;
    stream.onClose(
      this.fanOut.subscribe(interestOf(p, f), (e) => {
        if (!matches(e)) return;
        if (emit === null) buffered.push(e);
        else emit(e);
      }),
    );
    let backlog: StoredEvent[];
    try {
      backlog = (await this.backlog(p, f)).filter(matches);
    } catch (err) {
      // Refused or failed before the stream was handed out: its bus listener must not stay behind (it would
      // buffer every later event of the key for nobody).
      stream.return();
      throw err;
    }
    // Events read in the backlog may reach the bus too (committed just before the subscription); they are
    // skipped by id. Not by a sequence high-water mark: with several writers, events commit (and are
    // published) in another order than their sequence numbers, and a mark would drop the late ones.
    const sent = new Set<string>();
    // One transaction's events are sequenced in commit order (its row lock orders its transitions), so on a
    // one-transaction stream an event older than one already sent is history the subscriber has (its current
    // state went first), never news.
    let newestSeq = -1n;
    emit = (e: StoredEvent) => {
      if (sent.has(e.id)) return;
      if (f.transactionId !== undefined) {
        if (BigInt(e.seq) <= newestSeq) return;
        newestSeq = BigInt(e.seq);
      }
      stream.push(e);
      if (f.transactionId !== undefined && TERMINAL.includes(e.status as TxStatus)) stream.end();
    };
    for (const e of backlog) {
      emit(e);
      sent.add(e.id);
    }
    for (const e of buffered) emit(e);
    return stream;
  }

  /**
   * What the subscriber gets before live events: the replay after `lastEventId`; else, for one transaction, its
   * current state (its latest event: a pending one's creation, a finished one's final event, which also completes
   * the stream). Checks that the transaction is visible (NOT_FOUND otherwise).
   */
  private async backlog(p: Principal, f: LiveFilter): Promise<StoredEvent[]> {
    if (f.transactionId !== undefined) {
      // Scoped lookup, expired on read: another key's transaction is found exactly like a missing one.
      const tx = await this.transactions.one(p, f.transactionId, { patient: true });
      if (tx === null) throw new AppError("NOT_FOUND", "Transaction not found");
    }
    if (f.lastEventId !== undefined) return this.replay(p, f, f.lastEventId);
    if (f.transactionId === undefined) return [];
    const latest = await this.store.latestEventOf(f.transactionId);
    return latest === null ? [] : [latest];
  }

  /** The events after `lastEventId` (and the recent ones just before it), charged to the replay budget. */
  private async replay(p: Principal, f: LiveFilter, lastEventId: string): Promise<StoredEvent[]> {
    const budgetId = bucketOf(p, undefined);
    let reserved = false;
    let read = 0;
    try {
      if (this.replayBudget !== null) {
        const wait = this.replayBudget.take(budgetId, this.maxReplay + 1);
        if (wait > 0)
          throw new AppError(
            "RATE_LIMITED",
            `Too many events replayed for this credential (WS_REPLAY_EVENTS_PER_MINUTE); retry in ${wait} s`,
          );
        reserved = true;
      }
      const from = await this.store.eventById(lastEventId);
      if (from === null || !this.visible(p, from))
        throw new AppError("NOT_FOUND", "lastEventId is not an event you can see");
      const scope =
        f.transactionId !== undefined
          ? { transactionId: f.transactionId }
          : p.type === "key"
            ? { apiKeyRef: p.keyId }
            : { all: true as const };
      // Events commit out of sequence order with several writers: one that took a lower number than
      // lastEventId may have committed after it. The recent ones just before it are sent again (at least
      // once; clients de-duplicate by event id, as the replay and the bus are de-duplicated here).
      const seq = BigInt(from.seq);
      const marginStart = seq > RESUME_MARGIN ? (seq - RESUME_MARGIN).toString() : "0";
      const since = from.createdAt.getTime() - RESUME_WINDOW_MS;
      const before = (await this.store.eventsSince({ ...scope, afterSeq: marginStart }, Number(RESUME_MARGIN))).filter(
        (e) => BigInt(e.seq) < seq && e.createdAt.getTime() >= since,
      );
      const after = await this.store.eventsSince({ ...scope, afterSeq: from.seq }, this.maxReplay + 1);
      read = after.length + before.length;
      if (after.length > this.maxReplay)
        throw refuse(
          "lastEventId",
          `is more than ${this.maxReplay} events ago`,
          `More than ${this.maxReplay} events to replay after lastEventId (WS_MAX_REPLAY): read the transactions ` +
            "query for the current state, then subscribe without lastEventId",
        );
      return [...before, ...after];
    } finally {
      if (reserved) this.replayBudget?.refund(budgetId, Math.max(0, this.maxReplay + 1 - read));
    }
  }
}

/** Which events of the bus a subscriber follows: its one transaction, its key's, or everything. */
function interestOf(p: Principal, f: LiveFilter): Interest {
  if (f.transactionId !== undefined) return { transactionId: f.transactionId };
  if (p.type === "key") return { apiKeyRef: p.keyId };
  if (p.type === "client") return { transactionId: p.transactionId };
  return { all: true };
}
