import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import pg from "pg";
import { PGlite } from "@electric-sql/pglite";
import { EmbeddedServer } from "../../src/db/embedded-server.js";

/**
 * The embedded database's wire front: one PGlite session, many client connections, and each connection
 * must behave as if it had a server session of its own.
 */
describe("embedded database server", () => {
  let db: PGlite;
  let server: EmbeddedServer;
  let url: string;
  const warnings: string[] = [];
  const clients: pg.Client[] = [];
  const connect = async () => {
    const c = new pg.Client({ connectionString: url });
    c.on("error", () => undefined);
    await c.connect();
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    db = await PGlite.create();
    server = new EmbeddedServer(db, { idleInTransactionMs: 1_500, onWarning: (m) => warnings.push(m) });
    url = `postgresql://postgres@127.0.0.1:${await server.listen()}/postgres`;
    const c = await connect();
    await c.query("create table t (id int primary key, v text)");
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => undefined);
    await server.stop();
    await db.close();
  });

  it("gives each connection its own prepared-statement names (the same name, two texts, at once)", async () => {
    const [a, b] = [await connect(), await connect()];
    const run = (c: pg.Client, n: number) =>
      c.query({ name: "same_name", text: `select $1::int + ${n} as v`, values: [1] });
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => run(i % 2 ? a : b, i % 2 ? 100 : 200)));
    expect(results.map((r) => r.rows[0].v)).toEqual(Array.from({ length: 40 }, (_, i) => (i % 2 ? 101 : 201)));
  });

  it("runs a connection's extended-protocol sequence whole: 64 parameterised queries on 8 connections all get their own answers", async () => {
    const pool = new pg.Pool({ connectionString: url, max: 8 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 64 }, (_, i) => pool.query("select $1::text as v, $2::int as n", [`q${i}`, i])),
      );
      expect(answers.map((r) => r.rows[0])).toEqual(Array.from({ length: 64 }, (_, i) => ({ v: `q${i}`, n: i })));
    } finally {
      await pool.end();
    }
  });

  it("keeps another connection out of an open transaction: its statement waits for the commit and sees the result", async () => {
    const [a, b] = [await connect(), await connect()];
    await a.query("begin");
    await a.query("insert into t values (1, 'inside')");
    let seen: unknown = null;
    const reader = b.query("select v from t where id = 1").then((r) => (seen = r.rows[0]?.v ?? "none"));
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toBeNull(); // waiting, not reading half a transaction
    await a.query("commit");
    await reader;
    expect(seen).toBe("inside");
  });

  it("rolls back the transaction of a connection that goes away, and the others carry on", async () => {
    const [a, b] = [await connect(), await connect()];
    await a.query("begin");
    await a.query("insert into t values (2, 'never committed')");
    const waiting = b.query("select count(*)::int as n from t where id = 2");
    (a as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    expect((await waiting).rows[0].n).toBe(0);
    expect((await b.query("select 1 as ok")).rows[0].ok).toBe(1);
  });

  it("closes a connection that holds a transaction idle while others wait (idle_in_transaction cut-off)", async () => {
    const [a, b] = [await connect(), await connect()];
    const closed = new Promise<void>((resolve) => a.once("end", () => resolve()));
    await a.query("begin");
    await a.query("insert into t values (3, 'stuck')");
    const started = Date.now();
    const r = await b.query("select count(*)::int as n from t where id = 3");
    await closed;
    expect(r.rows[0].n).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(warnings.some((w) => w.includes("idle"))).toBe(true);
  });

  it("an error inside one connection's transaction leaves the others' statements untouched", async () => {
    const [a, b] = [await connect(), await connect()];
    await a.query("begin");
    await expect(a.query("select * from no_such_table")).rejects.toThrow(/no_such_table/);
    await a.query("rollback");
    const both = await Promise.all([b.query("select 7 as n"), a.query("select 8 as n")]);
    expect(both.map((x) => x.rows[0].n)).toEqual([7, 8]);
  });
});
