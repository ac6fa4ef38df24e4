import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import { StartupError } from "../errors.js";
import { startEmbeddedDb, type EmbeddedDb } from "./embedded.js";
import { lockDataDir, ownsDataDir, type DataDirLock } from "./data-dir-lock.js";
import { createOrm, migrate, underSchemaLock, type MigrationSpec, type Orm } from "./orm.js";
import { Db } from "./sql.js";

/** The job scheduler as storage opens and closes it (jobs/scheduler.ts, built by the caller: a higher layer). */
export interface StorageJobs {
  /** Frees the job locks a killed predecessor left (asked only on the embedded database, which is this process's). */
  releaseLeftLocks(): Promise<string[]>;
  stop(): Promise<void>;
}

/** What storage is opened with: the module list's tables and migrations, and what the layers above it bring. */
export interface StorageParts<S, J extends { jobs: StorageJobs }> {
  entities: (new (...args: never[]) => object)[];
  migrations: readonly MigrationSpec[];
  /** DATA_DIR is a directory this process can write (startup.ts): checked before anything in it is written. */
  checkDataDir(dataDir: string): void;
  /** A database failure during start-up as the operator's one line (startup.ts). */
  startupError(err: unknown, databaseUrl: string | null): unknown;
  /** The stored secrets, read (or created) once DATA_DIR's lock is held. */
  secrets(): S;
  /**
   * The job scheduler (and what it reports into), opened on the migrated database under the schema lock: Agenda
   * creates its table when it connects, so that happens with the migrations.
   */
  open(url: string, db: Db, poolSize: number): Promise<J>;
}

/** The database (DATABASE_URL, or the embedded one in DATA_DIR), its migrations, the secrets and the job scheduler. */
export type Storage<S, J> = J & {
  embedded: EmbeddedDb | null;
  /** The database URL this process connects to. */
  url: string;
  orm: Orm;
  db: Db;
  secrets: S;
  /** DATA_DIR's lock, when this process owns the directory (released last, once the database is closed). */
  lock: DataDirLock | null;
  /** Closes everything opened, for a start that fails half-way (each step's failure is ignored). */
  close(): Promise<void>;
};

/**
 * Opens storage for a process of `role`: DATA_DIR checked and locked (one process per data directory, decision 0166)
 * before anything in it is read, then the database, its migrations and the job scheduler. A failure gives back
 * what was opened, the lock last.
 */
export async function openStorage<S, J extends { jobs: StorageJobs }>(
  config: Config,
  role: string,
  logger: Logger,
  parts: StorageParts<S, J>,
): Promise<Storage<S, J>> {
  if (config.databaseUrl === null && role !== "serve")
    throw new Error(`Role "${role}" needs DATABASE_URL: the embedded database belongs to one process`);
  // The data directory holds the embedded database, demo.json and the demo secrets: checked before anything is written.
  const generatesSecrets = config.adminToken === null || config.secretKey === null;
  if (generatesSecrets || ownsDataDir(config, role)) parts.checkDataDir(config.dataDir);
  const lock = await lockDataDir(config, role);
  try {
    return await openLocked(config, logger, parts, lock);
  } catch (err) {
    lock?.release();
    throw err;
  }
}

async function openLocked<S, J extends { jobs: StorageJobs }>(
  config: Config,
  logger: Logger,
  parts: StorageParts<S, J>,
  lock: DataDirLock | null,
): Promise<Storage<S, J>> {
  const secrets = parts.secrets();
  const ormPool = config.databaseUrl ? config.dbPoolSize : 4;
  const jobPool = config.databaseUrl ? Math.min(4, config.dbPoolSize) : 2;
  const embedded = config.databaseUrl === null ? await startEmbedded(config, logger) : null;
  const url = config.databaseUrl ?? (embedded as EmbeddedDb).url;
  const orm = await createOrm(url, ormPool, parts.entities, parts.migrations).catch(async (err: unknown) => {
    await embedded?.stop().catch(() => undefined);
    throw parts.startupError(err, config.databaseUrl);
  });
  // Every role can enqueue jobs; only serve and worker process them.
  const db = new Db(orm);
  const opened = await underSchemaLock(url, async () => {
    await migrate(orm);
    const o = await parts.open(url, db, jobPool);
    // The embedded database belongs to this process (DATA_DIR's lock): a job lock in it is a killed predecessor's.
    const left = embedded === null ? [] : await o.jobs.releaseLeftLocks();
    if (left.length > 0)
      logger.warn(
        { jobs: left.length, names: left.join(",") },
        "released job locks left by a process that stopped without releasing them",
      );
    return o;
  }).catch(async (err: unknown) => {
    await orm.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw parts.startupError(err, config.databaseUrl);
  });
  return {
    ...opened,
    embedded,
    url,
    orm,
    db,
    secrets,
    lock,
    async close() {
      await opened.jobs.stop().catch(() => undefined);
      await orm.close().catch(() => undefined);
      await embedded?.stop().catch(() => undefined);
      lock?.release();
    },
  };
}

async function startEmbedded(config: Config, logger: Logger): Promise<EmbeddedDb> {
  const embedded = await startEmbeddedDb(config.dataDir, {
    onWarning: (msg, detail) => logger.warn(detail, msg),
  }).catch((err: unknown) => {
    throw new StartupError(
      `The embedded database could not start in DATA_DIR ${config.dataDir} (${(err as Error).message}): ` +
        `point DATA_DIR at a writable directory, or set DATABASE_URL`,
      { cause: err },
    );
  });
  if (config.nodeEnv === "production")
    logger.warn(
      "running in production on the embedded database (EMBEDDED_IN_PRODUCTION=1): one process, this disk, no replicas",
    );
  return embedded;
}
