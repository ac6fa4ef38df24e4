import { Migration } from "@mikro-orm/migrations";

/**
 * `meta`, the outbox payloads (which carry meta to webhooks and subscriptions) and stored idempotent
 * responses (which echo meta) become `json`: PostgreSQL keeps `json` text verbatim, where `jsonb` reorders
 * keys and rewrites numbers, so meta comes back exactly as sent (src/exact-json.ts). Rows written before
 * this migration keep the text jsonb gave them.
 */
export class M0002ExactJson extends Migration {
  override name = "m0002-exact-json";

  up(): void {
    this.addSql(`alter table "transaction" alter column meta drop default`);
    this.addSql(`alter table "transaction" alter column meta type json using meta::json`);
    this.addSql(`alter table "transaction" alter column meta set default '{}'::json`);
    this.addSql(`alter table transaction_event alter column payload type json using payload::json`);
    this.addSql(`alter table idempotency_key alter column response type json using response::json`);
  }
}
