import { AppError } from "../errors.js";
import type pg from "pg";
import type { PostgreSqlConnection } from "@mikro-orm/postgresql";
import type { Orm } from "./orm.js";
import { StatementHealth } from "./statement-health.js";
import { holdsNulText, NUL_MESSAGE } from "../validation/storable.js";

/**
 * Run one statement. Raw SQL uses `?` placeholders (as MikroORM's raw queries do). With `name`, it runs as
 * a named prepared statement: PostgreSQL parses and plans it once per connection, which is most of the
 * server's work for the hot write statements. A name must always carry the same text, so only constant
 * statements get one (and they list their columns: a prepared `*` breaks when a migration adds a column).
 */
export type Query = <T = Record<string, unknown>>(sql: string, params?: unknown[], name?: string) => Promise<T[]>;

const numbered = new Map<string, string>();

/** `?` → `$1, $2, …`, remembered per statement text (the texts are constants or a few shapes). */
function toNumbered(sql: string): string {
  let text = numbered.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    if (numbered.size > 5_000) numbered.clear();
    numbered.set(sql, text);
  }
  return text;
}

function runner(client: pg.Pool | pg.PoolClient, health: StatementHealth): Query {
  return async <T>(sql: string, params: unknown[] = [], name?: string) => {
    refuseNul(params);
    try {
      const rows = (
        await client.query({ text: toNumbered(sql), values: params, ...(name === undefined ? {} : { name }) })
      ).rows as T[];
      health.succeeded();
      return rows;
    } catch (err) {
      health.failed(err);
      throw err;
    }
  };
}

/**
 * PostgreSQL's wire protocol cannot carry U+0000 in a text parameter (the driver fails with "invalid
 * message format"). Such a value comes only from a client (an id or search text): it is refused as input.
 */
function refuseNul(params: unknown[]): void {
  for (const p of params) {
    if (Array.isArray(p)) refuseNul(p);
    else if (typeof p === "string" && holdsNulText(p)) throw new AppError("BAD_USER_INPUT", `Text ${NUL_MESSAGE}`);
  }
}

/**
 * The thin SQL edge used where the ORM's unit of work does not fit: conditional updates, outbox writes,
 * SKIP LOCKED claims. It runs on the ORM's own `pg` pool (so DB_POOL_SIZE bounds both) but straight through
 * `pg`: the ORM's raw-query path (inline every parameter as text, then Kysely) cost about a tenth of a
 * generate request's CPU and rules out prepared statements. Results are typed by the ORM's parsers
 * (timestamps stay text; see toDate).
 */
export class Db {
  private pool: Promise<pg.Pool> | null = null;
  /** Outcomes of this process's statements over the last 30 s (for /readyz). */
  readonly health = new StatementHealth();

  constructor(readonly orm: Orm) {}

  private native(): Promise<pg.Pool> {
    this.pool ??= (this.orm.em.getConnection() as unknown as PostgreSqlConnection).getNativeClient();
    return this.pool;
  }

  /**
   * The write probe /readyz runs: a named prepared statement that would write a real table (`where false`:
   * it writes nothing, but a read-only or recovering server refuses it at executor start). It exercises what
   * real work needs and a `select 1` does not: per-connection prepared statements and a writable session.
   */
  async probe(): Promise<void> {
    await (
      await this.native()
    ).query({ text: "update idempotency_key set key = key where false", name: "pqr_ready_probe" });
  }

  query: Query = async <T>(sql: string, params: unknown[] = [], name?: string) =>
    runner(await this.native(), this.health)<T>(sql, params, name);

  /** One database transaction; everything `fn` runs through `q` commits or rolls back together. */
  async transaction<T>(fn: (q: Query) => Promise<T>): Promise<T> {
    const client = await (await this.native()).connect().catch((err: unknown) => {
      this.health.failed(err);
      throw err;
    });
    let broken = false;
    try {
      await client.query("begin");
      const out = await fn(runner(client, this.health));
      await client.query("commit");
      return out;
    } catch (err) {
      // A connection that cannot even roll back is dropped rather than handed to the next request.
      await client.query("rollback").catch(() => (broken = true));
      throw err;
    } finally {
      client.release(broken);
    }
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
