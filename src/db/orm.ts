import { MikroORM, PostgreSqlDriver } from "@mikro-orm/postgresql";
import type { MigrationObject } from "@mikro-orm/core";
import { ReflectMetadataProvider } from "@mikro-orm/decorators/legacy";
import { Migrator } from "@mikro-orm/migrations";
import { MIGRATIONS } from "./migrations/index.js";
import pg from "pg";
import { parseExact } from "../exact-json.js";

export type Orm = MikroORM;

/** One migration: its permanent name (recorded in schema_migration) and its class. */
export type MigrationSpec = MigrationObject;

/** One ORM per process; every request and job forks its own EntityManager from it. */
/**
 * `entities`: what the modules declare (app.ts ENTITIES); `migrations`: the modules' own, run after the central
 * ones in the order given.
 */
export async function createOrm(
  url: string,
  poolSize: number,
  entities: (new (...args: never[]) => object)[],
  migrations: readonly MigrationSpec[] = [],
): Promise<Orm> {
  return MikroORM.init({
    driver: PostgreSqlDriver,
    clientUrl: url,
    driverOptions: { onPoolCreated: readJsonExactly },
    entities,
    metadataProvider: ReflectMetadataProvider,
    extensions: [Migrator],
    migrations: {
      migrationsList: [...MIGRATIONS, ...migrations],
      silent: true,
      snapshot: false,
      transactional: true,
      allOrNothing: true,
      tableName: "schema_migration",
    },
    pool: { min: 0, max: poolSize },
    debug: false,
    allowGlobalContext: false,
    forceUtcTimezone: true,
  });
}

/**
 * `json` columns (meta, outbox payloads, idempotent responses) keep the text as written; reading it with its exact
 * text remembered is what returns meta exactly as sent (src/exact-json.ts). jsonb is unchanged. Only this ORM's pool
 * reads them so: its clients take their type parsers from the pool's options (MikroORM's own, which this wraps), and
 * pg's process-wide parsers stay as they are for every other client.
 */
function readJsonExactly(pool: pg.Pool): void {
  const types = new pg.TypeOverrides(pool.options.types as ConstructorParameters<typeof pg.TypeOverrides>[0]);
  types.setTypeParser(pg.types.builtins.JSON, parseExact);
  pool.options.types = types;
}

export async function migrate(orm: Orm): Promise<void> {
  await orm.migrator.up();
}

export async function pendingMigrations(orm: Orm): Promise<number> {
  return (await orm.migrator.getPending()).length;
}

/** Any fixed number: the key of the advisory lock every process takes while it changes the schema. */
const SCHEMA_LOCK_KEY = 7_423_001;

/**
 * Runs `fn` while holding a PostgreSQL advisory lock on its own connection. Replicas that start together
 * on a fresh database (docker compose: two api and two workers) would otherwise race on CREATE TABLE —
 * ours in the migrations and Agenda's own table, which PostgreSQL answers with a duplicate-key error on
 * pg_type. The connection is not from the pool, so `fn` may use the pool freely (also on the embedded DB).
 */
export async function underSchemaLock<T>(url: string, fn: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => undefined); // a dropped connection releases the lock; fn's own errors still surface
  await client.connect();
  try {
    await client.query("select pg_advisory_lock($1)", [SCHEMA_LOCK_KEY]);
    return await fn();
  } finally {
    await client.end().catch(() => undefined);
  }
}
