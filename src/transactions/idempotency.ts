import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import { toDate } from "../db/sql.js";
import { AppError } from "../errors.js";
import { stringifyExact } from "../exact-json.js";
import { refuse } from "../validation/checker.js";
import type { KeyPrincipal } from "../auth/principal.js";

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600_000;
const WINDOW_MS = IDEMPOTENCY_WINDOW_MS;
/**
 * A claim with neither a response nor a transaction this old belongs to a request that died before its
 * create committed (no generate runs this long: upstream and page timeouts are at most 2 min): released.
 */
const STALE_CLAIM_MS = 10 * 60_000;
/** A claim whose transaction is written but whose response is not yet stored: wait this long before replaying. */
const RESPONSE_GRACE_MS = 2_000;

/** The claim of the request running in this async context: the create writes its transaction id onto it. */
export interface IdempotencyClaim {
  keyId: string;
  key: string;
}
const claimContext = new AsyncLocalStorage<IdempotencyClaim>();

/** The idempotency claim of the current request, if any (read by TransactionStore.create). */
export function currentClaim(): IdempotencyClaim | null {
  return claimContext.getStore() ?? null;
}

function stable(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return `[${v.map(stable).join(",")}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`)
    .join(",")}}`;
}

/**
 * `Idempotency-Key` on the generate operations: a retry with the same key and body within 24 h returns the
 * first response and creates nothing; the same key with another body is refused. The first request claims
 * the key with a unique insert, so concurrent duplicates cannot both create a transaction. The create's own
 * statement writes the new transaction's id onto the claim, so when the process dies between the create and
 * storing the response, a retry answers from that transaction (`replay`) instead of 409 for 24 h.
 */
export class Idempotency {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async run<T>(
    key: KeyPrincipal,
    idemKey: string | undefined,
    operation: string,
    input: unknown,
    fn: () => Promise<T>,
    /** The answer rebuilt from the transaction the claim's create wrote (after a crash before the response). */
    replay?: (transactionId: string) => Promise<T>,
  ): Promise<T> {
    if (idemKey === undefined || idemKey === "") return fn();
    const hash = requestHash(idemKey, operation, input);
    const now = this.clock.now();
    for (let attempt = 0; attempt < 100; attempt++) {
      const claimed = await this.db.query(
        `insert into idempotency_key (api_key_ref, key, operation, request_hash, response, created_at) values
          (?,?,?,?,null,?) on conflict do nothing returning key`,
        [key.keyId, idemKey, operation, hash, now],
      );
      if (claimed.length === 1) return this.runClaimed(key, idemKey, fn);
      const [row] = await this.db.query<{
        operation: string;
        request_hash: string;
        response: T | null;
        created_at: string;
        transaction_ref: string | null;
      }>(
        `select operation, request_hash, response, created_at, transaction_ref from idempotency_key
         where api_key_ref = ? and key = ?`,
        [key.keyId, idemKey],
      );
      if (row === undefined) continue; // the first request failed and released the key: claim it again
      if (now.getTime() - toDate(row.created_at).getTime() > WINDOW_MS) {
        await this.db.query(`delete from idempotency_key where api_key_ref = ? and key = ? and created_at = ?`, [
          key.keyId,
          idemKey,
          row.created_at,
        ]);
        continue;
      }
      if (row.operation !== operation || row.request_hash !== hash) {
        throw new AppError("IDEMPOTENCY_CONFLICT", "This Idempotency-Key was already used with a different request", [
          { field: "idempotency-key", message: "reused with a different body" },
        ]);
      }
      if (row.response !== null) return row.response;
      const age = this.clock.now().getTime() - toDate(row.created_at).getTime();
      if (
        row.transaction_ref !== null &&
        replay !== undefined &&
        (attempt * 100 >= RESPONSE_GRACE_MS || age > 60_000)
      ) {
        // The create committed and its response was never stored (the first request's process died).
        const result = await replay(row.transaction_ref);
        await this.db.query(
          `update idempotency_key set response = ?::json where api_key_ref = ? and key = ? and response is null`,
          [stringifyExact(result), key.keyId, idemKey],
        );
        return result;
      }
      if (row.transaction_ref === null && age > STALE_CLAIM_MS) {
        // The first request died before its create committed: nothing exists, the key may be used again.
        await this.db.query(
          `delete from idempotency_key where api_key_ref = ? and key = ? and created_at = ? and transaction_ref is null`,
          [key.keyId, idemKey, row.created_at],
        );
        continue;
      }
      await new Promise((r) => setTimeout(r, 100)); // the first request is still running
    }
    throw new AppError("IDEMPOTENCY_CONFLICT", "A request with this Idempotency-Key is still in progress", [
      { field: "idempotency-key", message: "in progress" },
    ]);
  }

  /** The first request with this key: runs it and stores its answer; an error releases the key. */
  private async runClaimed<T>(key: KeyPrincipal, idemKey: string, fn: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await claimContext.run({ keyId: key.keyId, key: idemKey }, fn);
    } catch (err) {
      // The first answer was an error: the key is released (as before), whatever the create wrote.
      await this.db
        .query(`delete from idempotency_key where api_key_ref = ? and key = ?`, [key.keyId, idemKey])
        .catch(() => undefined);
      throw err;
    }
    // If this fails (the database went away), the claim holds the transaction id: a retry replays.
    await this.db
      .query(`update idempotency_key set response = ?::json where api_key_ref = ? and key = ?`, [
        stringifyExact(result),
        key.keyId,
        idemKey,
      ])
      .catch(() => undefined);
    return result;
  }

  /** Deletes claims older than the 24 h window (the recurring `idempotency.prune` job); returns how many. */
  async prune(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - WINDOW_MS);
    let total = 0;
    for (;;) {
      // In slices, so a large backlog never holds one long transaction.
      const [row] = await this.db.query<{ n: number }>(
        `with gone as (delete from idempotency_key where (api_key_ref, key) in (
           select api_key_ref, key from idempotency_key where created_at < ? limit 5000) returning 1)
         select count(*)::int as n from gone`,
        [cutoff],
      );
      total += Number(row?.n ?? 0);
      if (Number(row?.n ?? 0) < 5000) return total;
    }
  }
}

/** The hash a key's first request is stored with: the operation and its input, canonical; the key is checked first. */
function requestHash(idemKey: string, operation: string, input: unknown): string {
  if (idemKey.length > 255)
    throw refuse("idempotency-key", "must be at most 255 characters", "Idempotency-Key must be at most 255 characters");
  let canonical: string;
  try {
    canonical = stable(input);
  } catch {
    // Only input nested thousands of levels deep overflows the recursion; no valid request is like that.
    throw new AppError("BAD_USER_INPUT", "The request is nested too deeply", []);
  }
  return createHash("sha256").update(`${operation}\n${canonical}`).digest("hex");
}
