import { Entity, PrimaryKey, Property } from "@mikro-orm/decorators/legacy";
import { newId } from "../ids.js";

/** Where an API key's events are delivered. Secrets are stored encrypted, shown once. */
@Entity({ tableName: "webhook_endpoint" })
export class WebhookEndpoint {
  @PrimaryKey({ type: "text" }) id: string = newId("whe");
  @Property({ type: "text" }) apiKeyRef!: string;
  @Property({ type: "text" }) url!: string;
  /** Event kinds delivered; empty = all. */
  @Property({ type: "json" }) events: string[] = [];
  @Property({ type: "text", hidden: true }) secretEnc!: string;
  @Property({ type: "text", hidden: true, nullable: true }) previousSecretEnc: string | null = null;
  @Property({ type: "timestamptz", nullable: true }) previousSecretExpiresAt: Date | null = null;
  @Property({ type: "boolean" }) enabled: boolean = true;
  @Property({ type: "text", nullable: true }) disabledReason: string | null = null;
  @Property({ type: "timestamptz", nullable: true }) failingSince: Date | null = null;
  @Property({ type: "timestamptz" }) createdAt: Date = new Date();
}
