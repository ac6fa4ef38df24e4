import type { Db } from "../db/sql.js";
import { rowToTx, type TxRecord } from "./record.js";
import type { Area } from "./transaction.entity.js";

/**
 * Claims up to `limit` non-terminal transactions of an area whose next check is due, leasing them until
 * `leaseUntil` (SKIP LOCKED: concurrent workers get disjoint sets, and a crashed worker's lease just runs
 * out). One statement, so no transaction is held open across the upstream call (PGlite, stack.md §3).
 * With `nextCheck`, the lease is the next check itself, never later than the expiry: a monitor that finds
 * nothing new has nothing more to write (the generic QR monitor's common case).
 */
export async function claimDue(
  db: Db,
  area: Area,
  now: Date,
  leaseUntil: Date,
  limit: number,
  opts: { nextCheck?: boolean } = {},
): Promise<TxRecord[]> {
  const rows = await db.query(
    `with due as (
       select id from "transaction"
       where area = ? and status in ('PENDING','CHECKOUT') and next_check_at <= ?
       order by next_check_at limit ? for update skip locked)
     update "transaction" t set next_check_at = ${opts.nextCheck ? "least(?::timestamptz, t.expires_at)" : "?"} from due where t.id = due.id
     returning t.*`,
    [area, now, limit, leaseUntil],
  );
  return rows.map(rowToTx);
}

/** After a check: when to look again (sooner than expiry so EXPIRED lands on time). */
export async function scheduleNext(db: Db, ids: string[], at: Date, failed: boolean): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `update "transaction" set next_check_at = least(?, expires_at), check_failures = case when ? then check_failures + 1 else 0 end
     where id in (${ids.map(() => "?").join(",")}) and status in ('PENDING','CHECKOUT')`,
    [at, failed, ...ids],
  );
}
