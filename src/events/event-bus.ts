import { EventEmitter } from "node:events";
import type { EventSink, StoredEvent } from "../transactions/stored-event.js";

export type { StoredEvent };

/**
 * In-process fan-out of committed events. The committing process publishes directly (so the embedded,
 * single-process mode, where NOTIFY does not cross connections, loses nothing); other processes learn of
 * events through LISTEN/NOTIFY (event-listener.ts) and publish here. Each event id is published once.
 */
export class EventBus implements EventSink {
  private readonly emitter = new EventEmitter();
  private readonly seen = new Set<string>();
  private readonly seenOrder: string[] = [];

  constructor(private readonly remember = 10_000) {
    this.emitter.setMaxListeners(0);
  }

  /**
   * Event ids this process is committing right now. Their NOTIFY can reach the listener before the commit
   * returns here; without this the listener would load each one again (a query per event under load).
   */
  private readonly committing = new Set<string>();

  committingLocally(id: string): void {
    this.committing.add(id);
  }

  /** The local commit failed or its outcome is unknown: the listener may load the event again. */
  notCommittingLocally(id: string): void {
    this.committing.delete(id);
  }

  publish(event: StoredEvent): void {
    this.committing.delete(event.id);
    if (this.seen.has(event.id)) return;
    this.seen.add(event.id);
    this.seenOrder.push(event.id);
    if (this.seenOrder.length > this.remember) this.seen.delete(this.seenOrder.shift() as string);
    this.emitter.emit("event", event);
  }

  /** Published already, or about to be by the process committing it. */
  hasSeen(id: string): boolean {
    return this.seen.has(id) || this.committing.has(id);
  }

  subscribe(listener: (e: StoredEvent) => void): () => void {
    this.emitter.on("event", listener);
    return () => this.emitter.off("event", listener);
  }
}
