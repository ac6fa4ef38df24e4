import { Migration } from "@mikro-orm/migrations";

/**
 * The delivery log keeps what each attempt sent and got (webhooks/attempt-record.ts): the headers sent (signature
 * redacted) and the first 4 KB of the answer's headers and body. A redelivery keeps the delivery's creation time
 * and says when it was asked for; its retry window runs from then.
 */
export class M0008DeliveryBodies extends Migration {
  override name = "m0008-delivery-bodies";

  up(): void {
    this.addSql(
      `alter table webhook_attempt add column if not exists request_headers jsonb,
         add column if not exists response_headers jsonb, add column if not exists response_body text,
         add column if not exists response_truncated boolean not null default false`,
    );
    this.addSql(`alter table webhook_delivery add column if not exists redelivered_at timestamptz`);
  }
}
