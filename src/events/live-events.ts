import { AppError } from "../errors.js";
import type { Principal } from "../auth/principal.js";
import type { EventBus, StoredEvent } from "./event-bus.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { TransactionQuery } from "../transactions/transaction-query.js";
import { EventStream } from "./event-stream.js";
import { TERMINAL, type TxStatus } from "../transactions/transaction.entity.js";

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
  constructor(
    private readonly store: TransactionStore,
    private readonly bus: EventBus,
    private readonly transactions: TransactionQuery,
  ) {}

  private visible(p: Principal, e: StoredEvent): boolean {
    if (p.type === "admin") return true;
    if (p.type === "key") return e.apiKeyRef === p.keyId;
    if (p.type === "client") return e.transactionId === p.transactionId;
    return false;
  }

  async open(p: Principal, f: LiveFilter): Promise<EventStream<StoredEvent>> {
    if (p.type === "anonymous")
      throw new AppError("UNAUTHENTICATED", "An API key, client token or admin token is required");
    if (p.type === "client" && f.transactionId === undefined)
      throw new AppError("UNAUTHENTICATED", "A client token can only follow its own transaction");
    let terminalNow = false;
    if (f.transactionId !== undefined) {
      // Scoped lookup, expired on read: another key's transaction is found exactly like a missing one.
      const tx = await this.transactions.one(p, f.transactionId);
      if (tx === null) throw new AppError("NOT_FOUND", "Transaction not found");
      terminalNow = TERMINAL.includes(tx.status as TxStatus);
    }
    const matches = (e: StoredEvent) =>
      this.visible(p, e) &&
      (f.transactionId === undefined || e.transactionId === f.transactionId) &&
      (f.area === undefined || e.area === f.area) &&
      (f.status === undefined || e.status === f.status);

    const stream = new EventStream<StoredEvent>();
    const buffered: StoredEvent[] = [];
    let replaying = true;
    // Events read in the replay may reach the bus too (committed just before the subscription); they are
    // skipped by id. Not by a sequence high-water mark: with several writers, events commit (and are
    // published) in another order than their sequence numbers, and a mark would drop the late ones.
    const replayed = new Set<string>();
    const emit = (e: StoredEvent) => {
      if (replayed.has(e.id)) return;
      stream.push(e);
      if (f.transactionId !== undefined && TERMINAL.includes(e.status as TxStatus)) stream.end();
    };
    stream.onClose(
      this.bus.subscribe((e) => {
        if (!matches(e)) return;
        if (replaying) buffered.push(e);
        else emit(e);
      }),
    );

    let replay: StoredEvent[] = [];
    if (f.lastEventId !== undefined) {
      const from = await this.store.eventById(f.lastEventId);
      if (from === null || !this.visible(p, from))
        throw new AppError("NOT_FOUND", "lastEventId is not an event you can see");
      replay = await this.store.eventsSince(
        f.transactionId !== undefined
          ? { transactionId: f.transactionId, afterSeq: from.seq }
          : p.type === "key"
            ? { apiKeyRef: p.keyId, afterSeq: from.seq }
            : { afterSeq: from.seq, all: true },
        1000,
      );
      replay = replay.filter(matches);
    } else if (terminalNow && f.transactionId !== undefined) {
      // Already finished: send its current state (the terminal event), then complete.
      const all = await this.store.eventsSince({ transactionId: f.transactionId, afterSeq: "0" }, 1000);
      const last = all.filter((e) => TERMINAL.includes(e.status as TxStatus)).pop();
      if (last) replay = [last];
    }
    for (const e of replay) {
      emit(e);
      replayed.add(e.id);
    }
    replaying = false;
    for (const e of buffered) emit(e);
    return stream;
  }
}
