import { fdatasyncSync, lstatSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { EmbeddedServer, type EmbeddedServerOptions } from "./embedded-server.js";
import { ownerOnly } from "./data-dir.js";

export interface EmbeddedDb {
  url: string;
  server: EmbeddedServer;
  stop(): Promise<void>;
}

/**
 * The zero-setup database: PGlite (Postgres in WASM) on disk under DATA_DIR, served by our own wire-protocol
 * front (embedded-server.ts) so the ORM, Agenda and the SQL edge use the same postgresql:// code path as a
 * real server, with per-connection statement names and whole units of work.
 *
 * It belongs to this process alone (docs/decisions/0085-sealed-embedded-database.md): the front listens on a
 * Unix socket in a fresh owner-only directory and asks for a secret made at each start, which lives only in
 * the URL this function returns; the data directory is the owner's (0700, files 0600, repaired at start, at
 * its real path); and a commit is on disk before it is acknowledged (fsync on, through the WAL's own fsync
 * calls). The caller makes sure no other process opens the same directory: the service takes DATA_DIR's
 * lock first (data-dir-lock.ts, docs/decisions/0166-one-process-per-data-directory.md).
 * Costs: queries are serialised, an open transaction makes every other connection wait, and NOTIFY does not
 * cross connections — the app publishes events in-process as well.
 */
export async function startEmbeddedDb(dataDir: string, opts: EmbeddedServerOptions = {}): Promise<EmbeddedDb> {
  // Files the engine creates from now on (relations, WAL segments) are the owner's only.
  process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const dir = join(dataDir, "pglite");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Where they really are: DATA_DIR, or its pglite directory, may be a symbolic link to another place.
  ownerOnly(dataDir);
  if (lstatSync(dir).isSymbolicLink()) ownerOnly(dir);
  const db = await PGlite.create(dir, { startParams: DURABLE_START });
  syncWrites(db);
  const password = randomBytes(24).toString("hex");
  const socketDir = mkdtempSync(join(tmpdir(), "pqs-db-")); // created 0700 by mkdtemp
  const server = new EmbeddedServer(db, { ...opts, password });
  try {
    await server.listen(join(socketDir, `.s.PGSQL.${SOCKET_PORT}`));
  } catch (err) {
    await db.close().catch(() => undefined);
    rmSync(socketDir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `postgresql://postgres:${password}@${encodeURIComponent(socketDir)}:${SOCKET_PORT}/postgres`,
    server,
    async stop() {
      await server.stop();
      await db.close();
      rmSync(socketDir, { recursive: true, force: true });
    },
  };
}

/** Only names the socket file (`.s.PGSQL.<port>`), as PostgreSQL clients expect: nothing listens on a port. */
const SOCKET_PORT = 5432;

/**
 * PGlite starts its engine with fsync off (`-F`). Without it, and with the WAL synced by fsync() — the only
 * sync call the engine's file layer passes on (its fdatasync is a no-op) — every commit reaches the disk.
 */
const DURABLE_START = PGlite.defaultStartParams.filter((p) => p !== "-F").concat(["-c", "wal_sync_method=fsync"]);

interface NodeFsStream {
  nfd?: number;
}

/** The engine's files go through Emscripten's NODEFS, which has no fsync: give it one that reaches the disk. */
function syncWrites(db: PGlite): void {
  const streamOps = db.Module.FS.filesystems.NODEFS as unknown as {
    stream_ops: { fsync?: (stream: NodeFsStream) => number };
  };
  streamOps.stream_ops.fsync = (stream) => {
    if (typeof stream.nfd === "number") fdatasyncSync(stream.nfd);
    return 0;
  };
}
