import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { EmbeddedServer, type EmbeddedServerOptions } from "./embedded-server.js";

export interface EmbeddedDb {
  url: string;
  server: EmbeddedServer;
  stop(): Promise<void>;
}

/**
 * The zero-setup database: PGlite (Postgres in WASM) on disk under DATA_DIR, served on a loopback port by
 * our own wire-protocol front (embedded-server.ts) so the ORM, Agenda and the SQL edge use the same
 * postgresql:// code path as a real server, with per-connection statement names and whole units of work.
 * Costs (research/stack.md §3): queries are serialised, an open transaction makes every other connection
 * wait, and NOTIFY does not cross connections — the app publishes events in-process as well.
 */
export async function startEmbeddedDb(dataDir: string, opts: EmbeddedServerOptions = {}): Promise<EmbeddedDb> {
  const dir = join(dataDir, "pglite");
  mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const server = new EmbeddedServer(db, opts);
  const port = await server.listen("127.0.0.1");
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    server,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
