import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

export interface EmbeddedDb {
  url: string;
  stop(): Promise<void>;
}

/**
 * The zero-setup database: PGlite (Postgres in WASM) on disk under DATA_DIR, served on a loopback port by
 * pglite-socket so the ORM, Agenda and the event listener use the same postgresql:// code path as a real
 * server. Costs (research/stack.md §3): queries are serialised, an open transaction blocks every other
 * connection, and NOTIFY does not cross connections — the app publishes events in-process as well.
 */
export async function startEmbeddedDb(dataDir: string, maxConnections: number): Promise<EmbeddedDb> {
  const dir = join(dataDir, "pglite");
  mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections });
  await server.start();
  const conn = server.getServerConn(); // "host:port"
  const port = Number(conn.slice(conn.lastIndexOf(":") + 1));
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
