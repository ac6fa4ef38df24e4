import { AppError } from "../errors.js";
import type { Orm } from "./orm.js";

/** Run one statement. Raw SQL uses `?` placeholders (MikroORM's raw query syntax). */
export type Query = <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;

/**
 * The thin SQL edge used where the ORM's unit of work does not fit: conditional updates, outbox writes,
 * SKIP LOCKED claims. Each call forks a fresh EntityManager, so nothing leaks between requests.
 */
/**
 * PostgreSQL's wire protocol cannot carry U+0000 in a text parameter (the driver fails with "invalid
 * message format"). Such a value comes only from a client (an id or search text): it is refused as input.
 */
function refuseNul(params: unknown[]): void {
  for (const p of params) {
    if (typeof p === "string" && p.includes("\u0000")) throw new AppError("BAD_USER_INPUT", "Text must not contain NUL characters (U+0000)");
  }
}

export class Db {
  constructor(readonly orm: Orm) {}

  query: Query = async <T>(sql: string, params: unknown[] = []) => {
    refuseNul(params);
    return (await this.orm.em.fork().execute(sql, params)) as T[];
  };

  /** One database transaction; everything `fn` runs through `q` commits or rolls back together. */
  async transaction<T>(fn: (q: Query) => Promise<T>): Promise<T> {
    return this.orm.em.fork().transactional(async (em) => {
      const q: Query = async <R>(sql: string, params: unknown[] = []) => {
        refuseNul(params);
        return (await em.execute(sql, params)) as R[];
      };
      return fn(q);
    });
  }
}

/** Timestamps come back from raw queries as text in UTC ("2026-01-01 10:00:00.123+00"). */
export function toDate(v: unknown): Date {
  if (v instanceof Date) return v;
  if (typeof v === "string") return new Date(v.includes("T") ? v : v.replace(" ", "T").replace(/\+00(:00)?$/, "Z"));
  throw new Error(`not a timestamp: ${String(v)}`);
}

export function toDateOrNull(v: unknown): Date | null {
  return v === null || v === undefined ? null : toDate(v);
}
