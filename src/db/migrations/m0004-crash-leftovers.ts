import { Migration } from "@mikro-orm/migrations";

/**
 * What a crash leaves behind (issue 16): an idempotency claim remembers the transaction its create wrote
 * (set in the create's own statement), so a retry after a crash between the create and storing the response
 * answers from that transaction; claims are pruned after their 24 h window by created_at.
 */
export class M0004CrashLeftovers extends Migration {
  override name = "m0004-crash-leftovers";

  up(): void {
    this.addSql(`alter table idempotency_key add column if not exists transaction_ref text`);
    this.addSql(`create index if not exists idempotency_key_created_idx on idempotency_key (created_at)`);
  }
}
