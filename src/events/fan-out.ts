import type { EventBus, StoredEvent } from "./event-bus.js";

/** Who a live subscriber follows: one transaction, one key's transactions, or everything (the operator). */
export type Interest = { transactionId: string } | { apiKeyRef: string } | { all: true };

type Listener = (e: StoredEvent) => void;

/** How many subscribers one turn of the event loop serves before it yields (setImmediate). */
export const FAN_OUT_CHUNK = 500;

/**
 * One bus listener for every live subscriber of this process, indexed by what each follows: an event costs
 * the subscribers it concerns, not every open subscription (20,000 of them on other transactions used to be
 * 20,000 filter calls per event). Large deliveries go out in chunks that yield to the event loop between
 * them, so health checks, requests and jobs keep running; events are delivered in publication order.
 */
export class FanOut {
  private readonly byTransaction = new Map<string, Set<Listener>>();
  private readonly byKey = new Map<string, Set<Listener>>();
  private readonly all = new Set<Listener>();
  private readonly queue: StoredEvent[] = [];
  private draining = false;
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly bus: EventBus) {}

  /** Live subscribers registered now. */
  get size(): number {
    let n = this.all.size;
    for (const set of this.byTransaction.values()) n += set.size;
    for (const set of this.byKey.values()) n += set.size;
    return n;
  }

  subscribe(interest: Interest, listener: Listener): () => void {
    this.unsubscribe ??= this.bus.subscribe((e) => this.publish(e));
    const set =
      "transactionId" in interest
        ? bucket(this.byTransaction, interest.transactionId)
        : "apiKeyRef" in interest
          ? bucket(this.byKey, interest.apiKeyRef)
          : this.all;
    set.add(listener);
    return () => {
      set.delete(listener);
      if ("transactionId" in interest && set.size === 0) this.byTransaction.delete(interest.transactionId);
      if ("apiKeyRef" in interest && set.size === 0) this.byKey.delete(interest.apiKeyRef);
    };
  }

  private publish(e: StoredEvent): void {
    this.queue.push(e);
    if (!this.draining) this.drain();
  }

  private drain(): void {
    this.draining = true;
    while (this.queue.length > 0) {
      const e = this.queue[0] as StoredEvent;
      const targets = [
        ...(this.byTransaction.get(e.transactionId) ?? []),
        ...(this.byKey.get(e.apiKeyRef) ?? []),
        ...this.all,
      ];
      if (targets.length <= FAN_OUT_CHUNK) {
        this.queue.shift();
        for (const l of targets) l(e);
        continue;
      }
      // A large delivery: chunk by chunk, the rest of the queue after it.
      this.queue.shift();
      void this.deliverInChunks(e, targets).then(() => this.drain());
      return;
    }
    this.draining = false;
  }

  private async deliverInChunks(e: StoredEvent, targets: Listener[]): Promise<void> {
    for (let i = 0; i < targets.length; i += FAN_OUT_CHUNK) {
      if (i > 0) await new Promise((r) => setImmediate(r));
      for (const l of targets.slice(i, i + FAN_OUT_CHUNK)) l(e);
    }
  }
}

function bucket(m: Map<string, Set<Listener>>, k: string): Set<Listener> {
  let s = m.get(k);
  if (s === undefined) m.set(k, (s = new Set()));
  return s;
}
