// Where a payment followed without its page keeps what its poll needs (on the transaction's upstream data, the
// token and cookies sealed), and the lease that tells workers who follows it: `next_check_at`, renewed while a
// worker holds it, so a dead worker's payments are claimed by another once their lease runs out.

import type { SecretBox } from "../auth/secret-box.js";
import type { Db } from "../db/sql.js";
import { rowToTx, type TxRecord } from "../transactions/record.js";
import { heldSql } from "../transactions/mismatch.js";
import type { LinkPollSession } from "./link-protocol.js";

/** What goes into `upstream.poll`: the public parts in clear, the token and the cookies sealed to the row. */
export interface StoredPoll {
  apiOrigin: string;
  clientId: string;
  requestTime: string;
  origin: string;
  referer: string;
  userAgent: string | null;
  language: string | null;
  expireInSec: string | null;
  sealed: string;
}

const PURPOSE = "link-poll-session" as const;

export function sealPoll(box: Pick<SecretBox, "seal">, transactionId: string, s: LinkPollSession): StoredPoll {
  const { token, cookies, ...open } = s;
  return { ...open, sealed: box.seal(JSON.stringify({ token, cookies }), PURPOSE, transactionId) };
}

/** The poll session of a transaction, or null when it is not followed without a page (or does not open). */
export function openPoll(box: Pick<SecretBox, "open">, tx: TxRecord): LinkPollSession | null {
  const stored = tx.upstream.poll as StoredPoll | undefined;
  if (stored === undefined || typeof stored.sealed !== "string") return null;
  const { sealed, ...open } = stored;
  const secret = JSON.parse(box.open(sealed, PURPOSE, tx.id).plain) as { token: string; cookies: string };
  return { ...open, token: secret.token, cookies: secret.cookies };
}

/** A followed payment's lease: another worker may claim it once this long passed without a renewal. */
export const POLL_LEASE_MS = 20_000;

const RETURNING = `returning t.*`;

/**
 * Claims link transactions that are due and followed without a page: pending ones, and expired ones whose late
 * watch is on (next_check_at set: a lease, or the time of the next late poll while no worker holds it), at most
 * `lateLimit` of those. SKIP LOCKED: concurrent workers get disjoint sets; the claim is the lease.
 */
export async function claimPolls(
  db: Db,
  now: Date,
  leaseUntil: Date,
  limit: number,
  lateLimit = limit,
): Promise<TxRecord[]> {
  if (limit <= 0) return [];
  const claim = (status: string) => `with due as (
      select id from "transaction"
      where area = 'gateway_link' and ${status} and next_check_at <= ? and (upstream->'poll') is not null
      order by next_check_at limit ? for update skip locked)
    update "transaction" t set next_check_at = ? from due where t.id = due.id ${RETURNING}`;
  const pending = await db.query(claim(`status in ('PENDING','CHECKOUT')`), [now, limit, leaseUntil]);
  const room = Math.min(limit - pending.length, lateLimit);
  const late =
    room <= 0 ? [] : await db.query(claim(`status = 'EXPIRED' and next_check_at is not null`), [now, room, leaseUntil]);
  return [...pending, ...late].map(rowToTx);
}

/**
 * Link transactions due with no poll session (the retired simulated page's): the pending ones past their 180 s are
 * returned to be expired; an expired one with a late-watch time but nothing to poll gets none.
 */
export async function claimUnpolled(db: Db, now: Date, limit: number): Promise<TxRecord[]> {
  await db.query(
    `update "transaction" set next_check_at = null where area = 'gateway_link' and status = 'EXPIRED'
       and next_check_at is not null and next_check_at <= ? and (upstream->'poll') is null`,
    [now],
  );
  const rows = await db.query(
    `with due as (
       select id from "transaction"
       where area = 'gateway_link' and status in ('PENDING','CHECKOUT') and next_check_at <= ?
         and (upstream->'poll') is null
       order by next_check_at limit ? for update skip locked)
     update "transaction" t set next_check_at = greatest(t.expires_at, ?::timestamptz) from due where t.id = due.id
     ${RETURNING}`,
    [now, limit, now],
  );
  return rows.map(rowToTx);
}

/**
 * Renews the leases of the payments this worker follows (or hands them over now: `until` = now). A row whose
 * next_check_at is beyond any lease (`now` + a lease) was parked for a later late poll meanwhile: left as it is.
 */
export async function renewLeases(db: Db, ids: string[], until: Date, now: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `update "transaction" set next_check_at = ? where id = any(?::text[]) and next_check_at is not null
       and next_check_at <= ? and status in ('PENDING','CHECKOUT','EXPIRED')`,
    [until, ids, new Date(now.getTime() + POLL_LEASE_MS)],
  );
}

/**
 * When an expired payment's late watch looks again (null: the watch is over, or never was). A time beyond a lease
 * parks it: no worker holds it until then, and whichever sweep finds it due claims it (poll-store's claimPolls).
 */
export async function setLateWatch(db: Db, id: string, at: Date | null): Promise<void> {
  // A held payment (an operator decides it) is never watched again, whatever raced with its hold.
  await db.query(
    `update "transaction" set next_check_at = ? where id = ? and status = 'EXPIRED' and not ${heldSql()}`,
    [at, id],
  );
}
