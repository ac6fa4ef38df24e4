import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect as connectSocket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { keepOutput, withOutput } from "../support/child-output.js";
import { pgFrame, pgPassword, pgStartup } from "../support/pg-wire.js";
import { waitFor, within } from "../support/wait.js";

/**
 * COPY refused by the engine's own answer, whatever the statement's text looks like
 * (docs/decisions/0177-copy-refused-by-the-engine-protocol.md). The front runs in a child process: a COPY
 * that reached the engine's copy-in mode ended the engine and left the next statement spinning on the event
 * loop (100 % CPU, SIGTERM ignored), which must not take the test run with it.
 */
const PASSWORD = "copy-secret";

/** The built front over an in-memory engine, stopped cleanly on SIGTERM. */
const SERVER = `
  import { PGlite } from "@electric-sql/pglite";
  import { EmbeddedServer } from "./dist/src/db/embedded-server.js";
  const db = await PGlite.create();
  await db.exec("create table t (a int)");
  const server = new EmbeddedServer(db, { password: ${JSON.stringify(PASSWORD)} });
  await server.listen(process.argv[1]);
  process.on("SIGTERM", async () => { await server.stop(); await db.close(); process.exit(0); });
  console.log("ready");`;

const q = (sql: string) => pgFrame("Q", Buffer.from(`${sql}\0`));
/** Parse (unnamed), Bind (no parameters), Execute, Sync: the extended protocol's one round. */
const extended = (sql: string) =>
  Buffer.concat([
    pgFrame("P", Buffer.from(`\0${sql}\0\0\0`)),
    pgFrame("B", Buffer.from("\0\0\0\0\0\0\0\0")),
    pgFrame("E", Buffer.from("\0\0\0\0\0")),
    pgFrame("S", Buffer.alloc(0)),
  ]);

/** The type of each message in a server's answer. */
function messageTypes(answer: string): string[] {
  const b = Buffer.from(answer, "latin1");
  const types: string[] = [];
  for (let at = 0; at + 5 <= b.length; at += 1 + b.readInt32BE(at + 1)) types.push(answer[at] as string);
  return types;
}

describe("COPY on the embedded database's wire", () => {
  let dir: string;
  let path: string;
  let child: ChildProcess;
  let output: () => string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pqs-copy-"));
    path = join(dir, ".s.PGSQL.5432");
    child = spawn(process.execPath, ["--input-type=module", "-e", SERVER, path], {
      env: { ...process.env, NODE_OPTIONS: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    output = keepOutput(child);
    await waitFor(() => output().includes("ready"), 60_000, 50, "the embedded front to listen");
  }, 90_000);
  afterAll(() => {
    child?.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Started and authenticated, then `bytes`: what the front answered and whether it closed within 5 s (or, with
   * `ready`, as soon as it answered ReadyForQuery).
   */
  const raw = async (bytes: Buffer, ready = false): Promise<{ answer: string; closed: boolean }> => {
    const sock = connectSocket(path);
    const chunks: Buffer[] = [];
    sock.on("data", (d: Buffer) => chunks.push(d));
    sock.on("error", () => undefined);
    const closed = new Promise<boolean>((resolve) => sock.once("close", () => resolve(true)));
    await new Promise<void>((resolve) => sock.once("connect", () => resolve()));
    sock.write(Buffer.concat([pgStartup(), pgPassword(PASSWORD)]));
    await waitFor(() => Buffer.concat(chunks).includes(Buffer.from("Z\0\0\0\x05I", "latin1")), 10_000, 10);
    chunks.length = 0;
    sock.write(bytes);
    // Only waited for when asked: a wait nobody awaits would fail later, inside whichever test runs then.
    const answered = () =>
      waitFor(() => Buffer.concat(chunks).includes(Buffer.from("Z\0\0\0\x05", "latin1")), 5_000, 10).then(
        () => false,
        () => false,
      );
    const gone = await within(ready ? answered() : closed, 5_000, false);
    sock.destroy();
    return { answer: Buffer.concat(chunks).toString("latin1"), closed: gone };
  };

  /** A query on a fresh pg connection, or "no answer" after 10 s (the engine spinning, the event loop blocked). */
  const answers = async (): Promise<unknown> => {
    const c = new pg.Client({ host: dir, port: 5432, user: "postgres", database: "postgres", password: PASSWORD });
    c.on("error", () => undefined);
    try {
      return await within(
        c.connect().then(async () => (await c.query("select count(*)::int as n from t")).rows[0].n),
        10_000,
        "no answer",
      );
    } finally {
      void c.end().catch(() => undefined);
    }
  };

  it.each([
    ["behind nested comments", q("/* /* */ */ COPY t FROM STDIN")],
    ["after a line comment ended by CR", q("-- x\rCOPY t FROM STDIN")],
    ["as the second statement of a simple query", q("insert into t values (1); copy t from stdin")],
    ["inside a transaction block", q("begin; insert into t values (2); COPY t FROM STDIN")],
    ["in an extended-protocol Parse", extended("/**/COPY t FROM STDIN")],
    ["to the client (COPY … TO STDOUT)", q("select 1; -- \r copy t to stdout")],
  ])(
    "refuses COPY %s: a FATAL 0A000 and a closed connection, nothing of it kept, and the front serves on",
    async (_how, bytes) => {
      await withOutput(output, async () => {
        const { answer, closed } = await raw(bytes);
        expect(closed).toBe(true);
        expect(answer).toContain("SFATAL\0");
        expect(answer).toContain("C0A000\0");
        expect(answer).toContain("COPY is not supported by the embedded database");
        // The engine's own copy response never reaches the client.
        expect(messageTypes(answer).filter((t) => "GHWdc".includes(t))).toEqual([]);
        // The statements around the COPY were rolled back with it; the next client is answered.
        expect(await answers()).toBe(0);
      });
    },
    30_000,
  );

  it("a COPY through dynamic SQL in a DO block is the engine's own error, and the connection goes on", async () => {
    const { answer, closed } = await raw(q("DO $$ BEGIN EXECUTE 'COPY t FROM STDIN'; END $$"), true);
    expect(closed).toBe(false);
    expect(answer).toContain("C0A000\0");
    expect(answer).toContain("cannot COPY to/from client in PL/pgSQL");
    expect(await answers()).toBe(0);
  }, 30_000);

  it.each([
    ["CopyData", "d"],
    ["CopyDone", "c"],
    ["CopyFail", "f"],
    ["FunctionCall", "F"],
  ])("refuses a client's own %s message", async (_what, type) => {
    const { answer, closed } = await raw(pgFrame(type, Buffer.from("x\0\0\0\0\0")));
    expect(closed).toBe(true);
    expect(answer).toContain("C0A000\0");
    expect(await answers()).toBe(0);
  });

  it("still answers SIGTERM after all of it, and exits cleanly", async () => {
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await within(exited, 15_000, "still running")).toBe(0);
  }, 30_000);
});
