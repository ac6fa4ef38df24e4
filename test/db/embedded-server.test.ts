import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import { connect as connectSocket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { PGlite } from "@electric-sql/pglite";
import { EmbeddedServer } from "../../src/db/embedded-server.js";
import { pgFrame, pgPassword, pgStartup } from "../support/pg-wire.js";
import { waitFor, within } from "../support/wait.js";

const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n, 0);
  return b;
};

/**
 * The embedded database's wire front: one PGlite session, many client connections, and each connection
 * must behave as if it had a server session of its own.
 */
describe("embedded database server", () => {
  let db: PGlite;
  let server: EmbeddedServer;
  let url: string;
  let dir: string;
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
    server = new EmbeddedServer(db, {
      idleInTransactionMs: 1_500,
      transactionMaxMs: 3_000,
      password: "s3cret",
      onWarning: (m) => warnings.push(m),
    });
    dir = mkdtempSync(join(tmpdir(), "pqs-wire-"));
    await server.listen(join(dir, ".s.PGSQL.5432"));
    url = `postgresql://postgres:s3cret@${encodeURIComponent(dir)}:5432/postgres`;
    const c = await connect();
    await c.query("create table t (id int primary key, v text)");
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => undefined);
    await server.stop();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives each connection its own prepared-statement names (the same name, two texts, at once)", async () => {
    const [a, b] = [await connect(), await connect()];
    const run = (c: pg.Client, n: number) =>
      c.query({ name: "same_name", text: `select $1::int + ${n} as v`, values: [1] });
    // Both connections at once, each one statement after the other (pg queues a client's queries anyway, and
    // warns about queuing them on one client).
    const results = await Promise.all(
      [a, b].map(async (c, k) => {
        const mine: number[] = [];
        for (let i = 0; i < 20; i++) mine.push((await run(c, k ? 100 : 200)).rows[0].v);
        return mine;
      }),
    );
    expect(results).toEqual([Array(20).fill(201), Array(20).fill(101)]);
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
    await waitFor(async () => server.stats().queued >= 1, 5_000, 10, "the reader's statement queued");
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

  it("asks every connection for the per-start secret: none or a wrong one is refused (28P01)", async () => {
    for (const password of [undefined, "wrong"]) {
      const c = new pg.Client({ host: dir, port: 5432, user: "postgres", database: "postgres", password });
      c.on("error", () => undefined);
      await expect(c.connect()).rejects.toMatchObject({ code: "28P01" });
    }
  });

  it("a setting changed on one connection never reaches another, nor outlives its unit", async () => {
    const [a, b] = [await connect(), await connect()];
    await a.query("set default_transaction_read_only = on");
    await b.query("insert into t values (10, 'b writes')");
    await a.query("insert into t values (11, 'a writes too')");
    await a.query("begin");
    await a.query("select set_config('default_transaction_read_only', 'on', false)");
    await a.query("commit");
    await b.query("insert into t values (12, 'after a transaction that set it')");
    expect((await b.query("select count(*)::int as n from t where id in (10, 11, 12)")).rows[0].n).toBe(3);
    // Behind comments as the engine reads them: nested, and a line comment ended by CR.
    await a.query("/* /* */ */ set default_transaction_read_only = on");
    await b.query("insert into t values (14, 'after a nested comment')");
    await a.query("-- x\rset default_transaction_read_only = on");
    await b.query("insert into t values (15, 'after a CR')");
    expect((await b.query("select count(*)::int as n from t where id in (14, 15)")).rows[0].n).toBe(2);
  });

  it("drops start-up options: `-c default_transaction_read_only=on` in a connection's options changes nothing", async () => {
    const sneaky = new pg.Client({ connectionString: url, options: "-c default_transaction_read_only=on" });
    sneaky.on("error", () => undefined);
    await sneaky.connect();
    clients.push(sneaky);
    await sneaky.query("insert into t values (13, 'written')");
    expect((await sneaky.query("show default_transaction_read_only")).rows[0].default_transaction_read_only).toBe(
      "off",
    );
  });

  it("cuts a transaction held past its limit even while it keeps issuing statements, and rolls it back", async () => {
    const [a, b] = [await connect(), await connect()];
    const ended = new Promise<void>((resolve) => a.once("end", () => resolve()));
    await a.query("begin");
    await a.query("insert into t values (20, 'held')");
    const busy = (async () => {
      for (;;) {
        await new Promise((r) => setTimeout(r, 200));
        await a.query("select 1"); // never idle: the idle cut-off alone would not end it
      }
    })().catch(() => "cut");
    await ended;
    expect(await busy).toBe("cut");
    expect((await b.query("select count(*)::int as n from t where id = 20")).rows[0].n).toBe(0);
    expect(warnings.some((w) => w.includes("held past its limit"))).toBe(true);
  });

  /** A raw connection: started and authenticated, or not, then `bytes`; what the server answered before closing. */
  const raw = async (bytes: Buffer, opts: { start?: boolean } = {}): Promise<{ answer: Buffer; closed: boolean }> => {
    const sock = connectSocket(join(dir, ".s.PGSQL.5432"));
    const chunks: Buffer[] = [];
    sock.on("data", (d: Buffer) => chunks.push(d));
    const closed = new Promise<boolean>((resolve) => sock.once("close", () => resolve(true)));
    await new Promise<void>((resolve) => sock.once("connect", () => resolve()));
    if (opts.start !== false) {
      sock.write(pgStartup());
      await waitFor(async () => Buffer.concat(chunks).includes(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3])), 5_000, 10);
      sock.write(pgPassword("s3cret"));
      await waitFor(async () => Buffer.concat(chunks).includes(Buffer.from("Z\0\0\0\x05I", "latin1")), 5_000, 10);
      chunks.length = 0;
    }
    sock.write(bytes);
    const gone = await within(closed, 3_000, false);
    sock.destroy();
    return { answer: Buffer.concat(chunks), closed: gone };
  };

  it.each([
    ["a start-up packet of length 0", Buffer.from("0000000004d2162f", "hex"), false, "08P01"],
    ["a message whose length is -1", Buffer.from("53ffffffff", "hex"), true, "08P01"],
    ["a message whose length is 2 GiB", Buffer.from("517fffffff", "hex"), true, "08P01"],
    [
      // Refused from its header alone, before anyone has authenticated: nothing of it is buffered or waited for.
      "a password message whose length says 31 MB",
      Buffer.concat([pgStartup(), Buffer.from("70", "hex"), int32(31 * 1024 * 1024), Buffer.alloc(64 * 1024)]),
      false,
      "08P01",
    ],
    ["a password message of 2 KB", Buffer.concat([pgStartup(), pgPassword("x".repeat(2048))]), false, "08P01"],
    ["a function call (F)", pgFrame("F", Buffer.alloc(8)), true, "0A000"],
    ["COPY data (d) out of the blue", pgFrame("d", Buffer.from("1\n")), true, "0A000"],
    ["COPY … FROM STDIN", pgFrame("Q", Buffer.from("copy t from stdin\0")), true, "0A000"],
    [
      "COPY behind a comment and another statement",
      pgFrame("Q", Buffer.from("select 1; /* x */ COPY t FROM STDIN\0")),
      true,
      "0A000",
    ],
  ])(
    "answers %s with an error and a closed connection, and keeps serving the others",
    async (_what, bytes, start, code) => {
      const before = Date.now();
      const { answer, closed } = await raw(bytes, { start });
      expect(closed).toBe(true);
      expect(answer.toString("latin1")).toContain(`C${code}\0`);
      expect(Date.now() - before).toBeLessThan(3_000);
      const c = await connect();
      expect((await c.query("select 42 as n")).rows[0].n).toBe(42);
    },
  );

  it("a connection that leaves a failed extended sequence open (Parse … Flush, then a Query) and goes away leaves the engine clean for the next", async () => {
    const sock = connectSocket(join(dir, ".s.PGSQL.5432"));
    const chunks: Buffer[] = [];
    sock.on("data", (d: Buffer) => chunks.push(d));
    await new Promise<void>((resolve) => sock.once("connect", () => resolve()));
    sock.write(Buffer.concat([pgStartup(), pgPassword("s3cret")]));
    await waitFor(async () => Buffer.concat(chunks).includes(Buffer.from("Z\0\0\0\x05I", "latin1")), 5_000, 10);
    // A statement the engine cannot parse, sent up to a Flush (no Sync): the engine now skips to the next Sync,
    // and a simple Query after it is skipped too (found by the wire fuzz, seed 859413220).
    sock.write(
      Buffer.concat([
        pgFrame("P", Buffer.from("\0selec 1\0\0\0")),
        pgFrame("B", Buffer.from("\0\0\0\0\0\0\0\0")),
        pgFrame("E", Buffer.from("\0\0\0\0\0")),
        pgFrame("H", Buffer.alloc(0)),
        pgFrame("Q", Buffer.from("select 1\0")),
      ]),
    );
    await waitFor(async () => Buffer.concat(chunks).includes(Buffer.from("42601")), 5_000, 10);
    await new Promise((r) => setTimeout(r, 200));
    sock.destroy();
    const other = await connect();
    const answer = await within(other.query("select 43 as n"), 10_000, null);
    expect(answer?.rows[0]?.n).toBe(43);
  });

  it("waits for the rest of a truncated message, and forgets it when its connection goes", async () => {
    const open = server.stats().connections;
    const whole = pgFrame("Q", Buffer.from("select 7\0"));
    const sock = connectSocket(join(dir, ".s.PGSQL.5432"));
    const chunks: Buffer[] = [];
    sock.on("data", (d: Buffer) => chunks.push(d));
    let closed = false;
    sock.once("close", () => (closed = true));
    await new Promise<void>((resolve) => sock.once("connect", () => resolve()));
    sock.write(pgStartup());
    await waitFor(async () => Buffer.concat(chunks).includes(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3])), 5_000, 10);
    sock.write(pgPassword("s3cret"));
    await waitFor(async () => Buffer.concat(chunks).includes(Buffer.from("Z\0\0\0\x05I", "latin1")), 5_000, 10);
    chunks.length = 0;
    sock.write(whole.subarray(0, whole.length - 3));
    // Another connection is served meanwhile (the server read on), and the first one is still open …
    const other = await connect();
    expect((await other.query("select 42 as n")).rows[0].n).toBe(42);
    expect(closed).toBe(false);
    // … still waiting for the bytes it was promised (no loop, no error): with them, it answers the query.
    sock.write(whole.subarray(whole.length - 3));
    await waitFor(async () => Buffer.concat(chunks).includes(Buffer.from("Z\0\0\0\x05I", "latin1")), 5_000, 10);
    // A DataRow with the one column "7", and no ErrorResponse.
    expect(Buffer.concat(chunks).includes(Buffer.from([0, 0, 0, 1, 0x37]))).toBe(true);
    expect(Buffer.concat(chunks).includes(Buffer.from("E\0\0\0", "latin1"))).toBe(false);
    // Truncated again, then the connection goes: the server forgets it.
    sock.write(whole.subarray(0, whole.length - 3));
    sock.destroy();
    await waitFor(async () => server.stats().connections === open + 1, 5_000, 10); // `other` stays
    const c = await connect();
    expect((await c.query("select 43 as n")).rows[0].n).toBe(43);
  });
});
