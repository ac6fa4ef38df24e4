import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import net from "node:net";
import pg from "pg";
import { createTestDatabase } from "../support/db.js";
import { waitFor } from "../support/wait.js";
import { databaseUnavailable } from "../../src/db/unavailable.js";
import { AppError } from "../../src/errors.js";

/** What the real driver throws in each situation, classified: retry later (503) or not (the usual mapping). */
describe("databaseUnavailable: which database failures are worth a retry", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  const failure = async (f: () => Promise<unknown>) =>
    f().then(
      () => {
        throw new Error("expected a failure");
      },
      (e: unknown) => e,
    );

  it("a server that is not listening", async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = s.address() as net.AddressInfo;
        s.close(() => resolve(port));
      });
    });
    const c = new pg.Client({ connectionString: `postgresql://postgres@127.0.0.1:${closed}/x` });
    c.on("error", () => undefined);
    expect(databaseUnavailable(await failure(() => c.connect()))).toBe(true);
  });

  it("a connection the server ended (restart, failover: 57P01) and the queries sent on it afterwards", async () => {
    const c = new pg.Client({ connectionString: db.url });
    c.on("error", () => undefined);
    await c.connect();
    const pid = (await c.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0].pid;
    const killer = new pg.Client({ connectionString: db.url });
    await killer.connect();
    const during = failure(() => c.query("select pg_sleep(5)"));
    // Ended while the statement runs on it, not before it arrives.
    await waitFor(
      async () =>
        (
          await killer.query(
            `select 1 from pg_stat_activity where pid = $1 and state = 'active' and query like '%pg_sleep(5)%'`,
            [pid],
          )
        ).rowCount === 1,
      10_000,
      20,
      "the statement running",
    );
    await killer.query("select pg_terminate_backend($1)", [pid]);
    await killer.end();
    expect(databaseUnavailable(await during)).toBe(true);
    expect(databaseUnavailable(await failure(() => c.query("select 1")))).toBe(true);
  });

  it("not: a statement the database refused, our own errors, or an upstream HTTP call that failed", async () => {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      expect(databaseUnavailable(await failure(() => c.query("selec 1")))).toBe(false);
      await c.query("create temp table t (id int primary key)");
      await c.query("insert into t values (1)");
      expect(databaseUnavailable(await failure(() => c.query("insert into t values (1)")))).toBe(false);
    } finally {
      await c.end();
    }
    expect(databaseUnavailable(new AppError("NOT_FOUND", "Transaction not found"))).toBe(false);
    expect(databaseUnavailable(await failure(() => fetch("http://127.0.0.1:1/")))).toBe(false);
  });
});
