// How much asking the upstream again may cost (docs/decisions/0194-recheck-bounds.md). A recheck is an upstream call
// on the caller's say-so, so a hostile or buggy key must neither flood the upstream nor take the turns of other
// tenants: each credential has its own small budget and at most two rechecks in flight, this process at most 16, and
// each transaction at most one recheck in flight and one per 10 s, held in the database so every process sees it.

import { AppError } from "../errors.js";
import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import { toDate, toDateOrNull } from "../db/sql.js";
import { bucketOf, RateLimiter } from "../auth/rate-limit.js";
import type { Principal } from "../auth/principal.js";

/** Rechecks a credential (an API key, the admin token) may start a minute; the bucket holds 10 (RateLimiter). */
export const RECHECKS_PER_MINUTE = 10;
/** Rechecks of one credential answering at once, in this process. */
export const RECHECKS_IN_FLIGHT_PER_CALLER = 2;
/** Rechecks answering at once in this process, all credentials together. */
export const RECHECKS_IN_FLIGHT = 16;
/** After a recheck of a transaction answered, the next one of it waits this long. */
export const RECHECK_SPACING_MS = 10_000;
/** A recheck that never said it ended (its process died) stops blocking the next one after this long. */
export const RECHECK_STALE_MS = 120_000;

/**
 * The in-process bounds of the callers: a token bucket per credential (the service's RateLimiter, its own instance:
 * the request limiter's 6,000 a minute says nothing about what an upstream can take) and the rechecks in flight.
 */
export class CallerBounds {
  private readonly limiter: RateLimiter;
  private readonly inFlight = new Map<string, number>();
  private total = 0;

  constructor(clock: Clock) {
    this.limiter = new RateLimiter(RECHECKS_PER_MINUTE, () => clock.now().getTime());
  }

  /**
   * Takes a turn for the caller, or throws RATE_LIMITED. Called before the transaction is read, so that a key
   * hammering another tenant's ids is answered exactly as for its own (never a hint that they exist).
   * Returns the function that gives the turn back.
   */
  enter(p: Principal): () => void {
    const bucket = bucketOf(p, undefined);
    const wait = this.limiter.take(bucket);
    if (wait > 0)
      throw new AppError("RATE_LIMITED", `Too many rechecks for this credential; retry in ${wait} s`, [], {
        retryAfter: wait,
      });
    const mine = this.inFlight.get(bucket) ?? 0;
    if (mine >= RECHECKS_IN_FLIGHT_PER_CALLER || this.total >= RECHECKS_IN_FLIGHT) {
      const who = mine >= RECHECKS_IN_FLIGHT_PER_CALLER ? "of this credential are" : "are";
      throw new AppError("RATE_LIMITED", `Too many rechecks ${who} waiting for their upstream; retry in 1 s`, [], {
        retryAfter: 1,
      });
    }
    this.inFlight.set(bucket, mine + 1);
    this.total++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.total--;
      const n = (this.inFlight.get(bucket) ?? 1) - 1;
      if (n <= 0) this.inFlight.delete(bucket);
      else this.inFlight.set(bucket, n);
    };
  }
}

/**
 * One transaction's turn, in the database (table transaction_recheck, one row per transaction ever rechecked): a
 * claim succeeds when the last recheck of it ended at least RECHECK_SPACING_MS ago, or started RECHECK_STALE_MS ago
 * and never ended. One statement, so two processes never both win.
 */
export class RecheckGate {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** The claim's start (to end it with), or throws RATE_LIMITED naming when the next recheck may be asked. */
  async claim(transactionId: string): Promise<Date> {
    const now = this.clock.now();
    const rows = await this.db.query(
      `insert into transaction_recheck as r (transaction_ref, started_at, finished_at) values (?, ?, null)
       on conflict (transaction_ref) do update set started_at = excluded.started_at, finished_at = null
         where (r.finished_at is not null and r.finished_at <= ?) or (r.finished_at is null and r.started_at <= ?)
       returning r.transaction_ref`,
      [transactionId, now, new Date(now.getTime() - RECHECK_SPACING_MS), new Date(now.getTime() - RECHECK_STALE_MS)],
    );
    if (rows.length > 0) return now;
    const [last] = await this.db.query(
      `select started_at, finished_at from transaction_recheck where transaction_ref = ?`,
      [transactionId],
    );
    const finished = toDateOrNull(last?.finished_at);
    if (finished === null)
      throw new AppError(
        "RATE_LIMITED",
        `A recheck of transaction ${transactionId} is waiting for its upstream (since ` +
          `${toDate(last?.started_at ?? now).toISOString()}); one at a time`,
        [],
        { retryAfter: 1 },
      );
    const next = new Date(finished.getTime() + RECHECK_SPACING_MS);
    const wait = Math.max(1, Math.ceil((next.getTime() - now.getTime()) / 1000));
    throw new AppError(
      "RATE_LIMITED",
      `Transaction ${transactionId} was rechecked at ${finished.toISOString()}; the next recheck may be asked from ` +
        `${next.toISOString()} (one per ${RECHECK_SPACING_MS / 1000} s)`,
      [],
      { retryAfter: wait },
    );
  }

  /** The recheck that claimed at `startedAt` has its answer: the spacing counts from now. */
  async end(transactionId: string, startedAt: Date): Promise<void> {
    await this.db.query(`update transaction_recheck set finished_at = ? where transaction_ref = ? and started_at = ?`, [
      this.clock.now(),
      transactionId,
      startedAt,
    ]);
  }

  /** Rows of rechecks long over (nothing is gated by them any more). */
  async prune(): Promise<number> {
    const before = new Date(this.clock.now().getTime() - 24 * 3600_000);
    const rows = await this.db.query(
      `delete from transaction_recheck where coalesce(finished_at, started_at) < ? returning transaction_ref`,
      [before],
    );
    return rows.length;
  }
}
