import type { EventType } from "./transaction-event.entity.js";
import type { Json } from "./transaction.entity.js";

/** An outbox row as it travels to subscribers and the webhook dispatcher. */
export interface StoredEvent {
  seq: string;
  id: string;
  transactionId: string;
  apiKeyRef: string;
  area: string;
  type: EventType;
  status: string;
  /** `{ transaction, meta }`: the webhook body's `data`. */
  payload: Json;
  createdAt: Date;
  /** Delivery rows written with the event; known only in the process that committed it. */
  deliveries?: number;
}

/**
 * Where the write model announces what it committed. The events module's bus implements it; the write
 * model knows nothing of who listens.
 */
export interface EventSink {
  publish(event: StoredEvent): void;
  /** The event is being committed here: its NOTIFY need not be loaded again by this process's listener. */
  committingLocally(id: string): void;
  /** The local commit failed or its outcome is unknown. */
  notCommittingLocally(id: string): void;
}
