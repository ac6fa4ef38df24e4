import type express from "express";
import { pendingMigrations, type Orm } from "../db/orm.js";
import type { Db } from "../db/sql.js";
import type { Module } from "../module.js";

/** What /readyz answers (200 when `ok`, else 503). */
export interface Readiness {
  ok: boolean;
  checks: Record<string, boolean>;
  details?: Record<string, unknown>;
}

/** What readiness is judged on: the database, this process's job scheduler (null in an api process), the modules. */
export interface ReadinessDeps {
  db: Db;
  orm: Orm;
  scheduler: { readonly running: boolean } | null;
  modules: readonly Module[];
  /** The caller's own start-up work is done (`deferStartup`: the demo tenant). */
  startupDone(): boolean;
}

/**
 * Ready means able to do the work, not only to connect: a write probe through a prepared statement, and the recent
 * statements of this process (docs/decisions/0091-readiness-tells-the-truth.md); the migrations all applied, the
 * jobs running, start-up done, and whatever the modules add to the details.
 */
export function readiness(deps: ReadinessDeps): () => Promise<Readiness> {
  const { db, orm, scheduler, modules } = deps;
  return async () => {
    const checks: Record<string, boolean> = {};
    const details: Record<string, unknown> = {};
    const probe = await db.probe().then(
      () => null,
      (err: unknown) => err,
    );
    checks.database = probe === null;
    if (probe !== null) details.database = `the write probe failed: ${sqlState(probe)}`;
    const statements = db.health.verdict();
    checks.statements = statements.ok;
    if (!statements.ok) details.statements = statements;
    checks.migrations =
      checks.database &&
      (await pendingMigrations(orm).then(
        (n) => n === 0,
        () => false,
      ));
    checks.jobs = scheduler === null || scheduler.running;
    checks.startup = deps.startupDone();
    for (const m of modules) Object.assign(details, m.readiness?.() ?? {});
    const ok = Object.values(checks).every(Boolean);
    return { ok, checks, ...(Object.keys(details).length > 0 ? { details } : {}) };
  };
}

/** GET /readyz on the public listener: the verdict, 200 when ready and 503 when not. */
export function mountReadiness(app: express.Express, ready: () => Promise<Readiness>): void {
  app.get("/readyz", async (_req, res) => {
    const r = await ready();
    res.status(r.ok ? 200 : 503).json(r);
  });
}

function sqlState(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? `SQLSTATE ${code}` : err instanceof Error ? err.name : "unknown error";
}
