import { describe, it, expect, afterEach } from "@jest/globals";
import pg from "pg";
import { startTestApp, type TestApp } from "../support/app.js";
import { StatementHealth } from "../../src/db/statement-health.js";
import { statusOf } from "../support/http.js";

const ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
type Ready = { ok: boolean; checks: Record<string, boolean>; details?: Record<string, unknown> };
const readyz = async (t: TestApp) => {
  const r = await fetch(`${t.url}/readyz`);
  return { status: r.status, body: (await r.json()) as Ready };
};

/** /readyz answers for the work, not for the connection: a process that cannot do its job says so. */
describe("readiness tells the truth", () => {
  let t: TestApp | null = null;
  afterEach(async () => {
    await t?.stop();
    t = null;
  });

  it("answers 503 while this process's statements fail, though the database still connects", async () => {
    t = await startTestApp();
    expect((await readyz(t)).status).toBe(200);
    for (let i = 0; i < 8; i++) await t.app.core.db.query("select * from no_such_table_here").catch(() => undefined);
    const r = await readyz(t);
    expect(r.status).toBe(503);
    expect(r.body.checks).toEqual(expect.objectContaining({ statements: false, database: true }));
    expect(r.body.details?.statements).toEqual(expect.objectContaining({ failed: 8, lastError: "SQLSTATE 42P01" }));
    expect(await statusOf(`${t.url}/healthz`)).toBe(200); // alive, not ready
  }, 60_000);

  it("answers 503 when the database takes connections but refuses writes (the write probe)", async () => {
    t = await startTestApp();
    const name = new URL(t.dbUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    try {
      await admin.query(`alter database "${name}" set default_transaction_read_only = on`);
      // Existing sessions keep their settings: end them, as a failover to a read-only server would.
      await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`,
        [name],
      );
      // The first probes may meet a pooled connection that was just terminated (57P01); the pool replaces it,
      // and the probe on a new session must then be refused for the read-only setting itself.
      const r = await (async () => {
        for (let i = 0; i < 40; i++) {
          const x = await readyz(t as TestApp);
          if (/SQLSTATE 25006/.test(String(x.body.details?.database))) return x;
          await new Promise((res) => setTimeout(res, 250));
        }
        return readyz(t as TestApp);
      })();
      expect(r.status).toBe(503);
      expect(r.body.checks.database).toBe(false);
      expect(String(r.body.details?.database)).toMatch(/write probe failed: SQLSTATE 25006/);
    } finally {
      await admin.query(`alter database "${name}" reset default_transaction_read_only`);
      await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`,
        [name],
      );
      await admin.end();
    }
  }, 60_000);
});

describe("statement health window", () => {
  it("counts outages, not the request's own data errors, and forgets after the window", () => {
    let now = 1_000_000;
    const h = new StatementHealth({ windowMs: 30_000, now: () => now });
    for (let i = 0; i < 20; i++) h.failed(Object.assign(new Error("duplicate key"), { code: "23505" }));
    for (let i = 0; i < 20; i++) h.failed(Object.assign(new Error("bad number"), { code: "22P02" }));
    expect(h.verdict().ok).toBe(true);
    for (let i = 0; i < 5; i++) h.failed(Object.assign(new Error("prepared statement exists"), { code: "42P05" }));
    expect(h.verdict()).toEqual(expect.objectContaining({ ok: true, failed: 5 })); // 5 of 45: a blip
    for (let i = 0; i < 10; i++) h.failed(new Error("Connection terminated unexpectedly"));
    expect(h.verdict()).toEqual(expect.objectContaining({ ok: false, failed: 15, lastError: "Error" }));
    now += 31_000;
    expect(h.verdict()).toEqual(expect.objectContaining({ ok: true, failed: 0, statements: 0 }));
  });
});
