import { Entity, PrimaryKey, Property } from "@mikro-orm/decorators/legacy";

export type DeliveryState = "pending" | "delivered" | "failed";

/** One event to one endpoint: written with the event, retried until delivered or given up. */
@Entity({ tableName: "webhook_delivery" })
export class WebhookDelivery {
  @PrimaryKey({ type: "text" }) id!: string;
  @Property({ type: "text" }) eventRef!: string;
  @Property({ type: "text" }) endpointRef!: string;
  @Property({ type: "text" }) state: DeliveryState = "pending";
  @Property({ type: "integer" }) attempts: number = 0;
  @Property({ type: "timestamptz", nullable: true }) nextAttemptAt: Date | null = null;
  @Property({ type: "integer", nullable: true }) lastStatusCode: number | null = null;
  @Property({ type: "text", nullable: true }) lastError: string | null = null;
  @Property({ type: "timestamptz", nullable: true }) deliveredAt: Date | null = null;
  @Property({ type: "timestamptz" }) createdAt!: Date;
  /** The last time an operator asked for it again (the retry window runs from then). */
  @Property({ type: "timestamptz", nullable: true }) redeliveredAt: Date | null = null;
}

/** Every attempt, for the delivery log. */
@Entity({ tableName: "webhook_attempt" })
export class WebhookAttempt {
  @PrimaryKey({ type: "bigint", autoincrement: true }) id!: string;
  @Property({ type: "text" }) deliveryRef!: string;
  @Property({ type: "timestamptz" }) attemptedAt!: Date;
  @Property({ type: "integer", nullable: true }) statusCode: number | null = null;
  @Property({ type: "integer" }) latencyMs!: number;
  @Property({ type: "text", nullable: true }) error: string | null = null;
  /** Headers sent, the signature redacted (attempt-record.ts). */
  @Property({ type: "json", nullable: true }) requestHeaders: unknown = null;
  @Property({ type: "json", nullable: true }) responseHeaders: unknown = null;
  /** The first 4 KB of the answer's body. */
  @Property({ type: "text", nullable: true }) responseBody: string | null = null;
  @Property({ type: "boolean" }) responseTruncated: boolean = false;
}
