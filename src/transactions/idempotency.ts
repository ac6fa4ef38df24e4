import { createHash } from "node:crypto";
import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import { toDate } from "../db/sql.js";
import { AppError } from "../errors.js";
import { stringifyExact } from "../exact-json.js";
import type { KeyPrincipal } from "../auth/principal.js";

const WINDOW_MS = 24 * 3600_000;

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
 * the key with a unique insert, so concurrent duplicates cannot both create a transaction.
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
  ): Promise<T> {
    if (idemKey === undefined || idemKey === "") return fn();
    if (idemKey.length > 255)
      throw new AppError("BAD_USER_INPUT", "Idempotency-Key must be at most 255 characters", [
        { field: "idempotency-key", message: "must be at most 255 characters" },
      ]);
    let canonical: string;
    try {
      canonical = stable(input);
    } catch {
      // Only input nested thousands of levels deep overflows the recursion; no valid request is like that.
      throw new AppError("BAD_USER_INPUT", "The request is nested too deeply", []);
    }
    const hash = createHash("sha256").update(`${operation}\n${canonical}`).digest("hex");
    const now = this.clock.now();
    for (let attempt = 0; attempt < 100; attempt++) {
      const claimed = await this.db.query(
        `insert into idempotency_key (api_key_ref, key, operation, request_hash, response, created_at) values
          (?,?,?,?,null,?) on conflict do nothing returning key`,
        [key.keyId, idemKey, operation, hash, now],
      );
      if (claimed.length === 1) {
        try {
          const result = await fn();
          await this.db.query(`update idempotency_key set response = ?::json where api_key_ref = ? and key = ?`, [
            stringifyExact(result),
            key.keyId,
            idemKey,
          ]);
          return result;
        } catch (err) {
          await this.db.query(`delete from idempotency_key where api_key_ref = ? and key = ?`, [key.keyId, idemKey]);
          throw err;
        }
      }
      const [row] = await this.db.query<{
        operation: string;
        request_hash: string;
        response: T | null;
        created_at: string;
      }>(
        `select operation, request_hash, response, created_at from idempotency_key where api_key_ref = ? and key = ?`,
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
      await new Promise((r) => setTimeout(r, 100)); // the first request is still running
    }
    throw new AppError("IDEMPOTENCY_CONFLICT", "A request with this Idempotency-Key is still in progress", [
      { field: "idempotency-key", message: "in progress" },
    ]);
  }
}
