import { Migration } from "@mikro-orm/migrations";
import type { MigrationSpec } from "../module.js";

/**
 * One row per transaction ever rechecked (transactions/recheck-bounds.ts): when its last recheck started and ended,
 * so that every process sees one recheck at a time and one per 10 s. No foreign key: a key-share lock on the
 * transaction row would wait behind the transition function's row locks, and the row is only bookkeeping.
 */
class TransactionRecheck extends Migration {
  override name = "transactions-0001-recheck";

  up(): void {
    this.addSql(`create table if not exists transaction_recheck (
      transaction_ref text primary key,
      started_at timestamptz not null,
      finished_at timestamptz
    )`);
  }
}

/** The transactions module's own migrations, run after the central ones (module.ts). */
export const TRANSACTIONS_MIGRATIONS: MigrationSpec[] = [
  { name: "transactions-0001-recheck", class: TransactionRecheck },
];
