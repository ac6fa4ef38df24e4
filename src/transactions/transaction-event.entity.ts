import { Entity, PrimaryKey, Property } from "@mikro-orm/decorators/legacy";
import type { Json } from "./transaction.entity.js";

export type EventType =
  | "payment.created"
  | "payment.scanned"
  | "payment.completed"
  | "payment.failed"
  | "payment.expired"
  | "payment.mismatched"
  | "transaction.updated";
export const EVENT_TYPES: readonly EventType[] = [
  "payment.created",
  "payment.scanned",
  "payment.completed",
  "payment.failed",
  "payment.expired",
  "payment.mismatched",
  "transaction.updated",
];

/** When each event is emitted (docs/webhooks.md has the table per area); the OpenAPI document's webhooks. */
export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  "payment.created": "A QR was issued (PENDING, or CHECKOUT for the hosted gateway)",
  "payment.scanned": "A gateway-link QR was scanned; still PENDING",
  "payment.completed":
    "The payment succeeded (SUCCESS); a gateway-link one carries receiptUrl when the gateway gave one",
  "payment.failed": "The payment failed (FAILED)",
  "payment.expired": "The QR expired unpaid (EXPIRED)",
  "payment.mismatched":
    "A payment arrived that is not what was asked (another amount, currency or receiving account): held, never " +
    "SUCCESS, its status kept and its mismatch saying what arrived, until an operator accepts it as paid " +
    "(payment.completed) or marks it failed (payment.failed)",
  "transaction.updated": "A change that is not a new status (e.g. a receipt arriving after an approval)",
};

/** The outbox: one row per visible change, written in the same database transaction as the change. */
@Entity({ tableName: "transaction_event" })
export class TransactionEvent {
  /** Monotonic sequence: the order subscribers replay in. */
  @PrimaryKey({ type: "bigint", autoincrement: true }) seq!: string;
  @Property({ type: "text", unique: true }) id!: string;
  @Property({ type: "text" }) transactionRef!: string;
  @Property({ type: "text" }) apiKeyRef!: string;
  @Property({ type: "text" }) area!: string;
  @Property({ type: "text" }) type!: EventType;
  @Property({ type: "text" }) status!: string;
  /** The transaction as the public API shows it at this event, plus meta. */
  @Property({ type: "json", columnType: "json" }) payload!: Json;
  @Property({ type: "timestamptz" }) createdAt!: Date;
}
