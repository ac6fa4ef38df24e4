import type { Db } from "../db/sql.js";
import { rowToTx, type TxRecord } from "./record.js";
import type { Area } from "./transaction.entity.js";
import { heldSql } from "./mismatch.js";

/** `expires_at`, or for a transaction already past it, its end of grace (an area with an expiry policy). */
const CAP = `case when expires_at > ?::timestamptz then expires_at else expires_at + ?::float8 * interval '1 millisecond' end`;

/**
 * Claims up to `limit` non-terminal transactions of an area whose next check is due, leasing them until
 * `leaseUntil` (SKIP LOCKED: concurrent workers get disjoint sets, and a crashed worker's lease just runs
 * out). One statement, so no transaction is held open across the upstream call (on PGlite an open
 * transaction blocks every other connection).
 * With `nextCheck`, the lease is the next check itself, never later than the expiry (or, past the expiry,
 * the end of the grace `graceMs`): a monitor that finds nothing new has nothing more to write (the generic
 * QR monitor's common case).
 */
export async function claimDue(
  db: Db,
  area: Area,
  now: Date,
  leaseUntil: Date,
  limit: number,
  opts: { nextCheck?: boolean; graceMs?: number } = {},
): Promise<TxRecord[]> {
  const lease = opts.nextCheck ? `least(?::timestamptz, ${CAP.replaceAll("expires_at", "t.expires_at")})` : "?";
  // In the order they fell due (longest waiting first), so a port with a budget serves them fairly.
  const rows = await db.query(
    `with due as (
       select id, next_check_at as was from "transaction"
       where area = ? and status in ('PENDING','CHECKOUT') and next_check_at <= ? and not ${heldSql()}
       order by next_check_at limit ? for update skip locked),
     claimed as (update "transaction" t set next_check_at = ${lease} from due where t.id = due.id
       returning t.*, due.was)
     select * from claimed order by was`,
    [area, now, limit, leaseUntil, ...(opts.nextCheck ? [now, opts.graceMs ?? 0] : [])],
  );
  return rows.map(rowToTx);
}

/**
 * After a check: when to look again (sooner than expiry so EXPIRED lands on time; past the expiry, no later
 * than the end of the grace).
 */
export async function scheduleNext(
  db: Db,
  ids: string[],
  at: Date,
  failed: boolean,
  grace: { now: Date; graceMs: number } = { now: at, graceMs: 0 },
): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `update "transaction" set next_check_at = least(?::timestamptz, ${CAP}),
       check_failures = case when ? then check_failures + 1 else 0 end
     where id in (${ids.map(() => "?").join(",")}) and status in ('PENDING','CHECKOUT')`,
    [at, grace.now, grace.graceMs, failed, ...ids],
  );
}

/**
 * The late watch (generic QR area): claims EXPIRED transactions whose next late check is due, leasing them
 * until `leaseUntil` (transaction_late_due_idx covers exactly these rows).
 */
export async function claimLate(db: Db, area: Area, now: Date, leaseUntil: Date, limit: number): Promise<TxRecord[]> {
  const rows = await db.query(
    `with due as (
       select id from "transaction"
       where area = ? and status = 'EXPIRED' and next_check_at is not null and next_check_at <= ? and not ${heldSql()}
       order by next_check_at limit ? for update skip locked)
     update "transaction" t set next_check_at = ? from due where t.id = due.id
     returning t.*`,
    [area, now, limit, leaseUntil],
  );
  return rows.map(rowToTx);
}

/** The next late check of expired transactions (null: the watch is over). */
export async function scheduleLate(db: Db, ids: string[], at: Date | null, failed: boolean): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `update "transaction" set next_check_at = ?::timestamptz,
       check_failures = case when ? then check_failures + 1 else 0 end
     where id in (${ids.map(() => "?").join(",")}) and status = 'EXPIRED'`,
    [at, failed, ...ids],
  );
}
