import { createHash, timingSafeEqual } from "node:crypto";
import { chmodSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { PGlite } from "@electric-sql/pglite";
import {
  CANCEL_REQUEST,
  GSS_REQUEST,
  PROTOCOL_3,
  SSL_REQUEST,
  COPY_REFUSED,
  CopyWatch,
  MAX_PASSWORD,
  changesSettings,
  cstr,
  errorResponse,
  frame,
  passwordOf,
  passwordRequest,
  readMessage,
  readStartup,
  splitName,
  startupPacket,
  startupParams,
  statementText,
  withCopyFail,
  type Read,
} from "./embedded-wire.js";

/**
 * PostgreSQL's wire protocol in front of one PGlite session, with the session semantics a connection pool
 * expects of a real server (docs/decisions/0084-embedded-database-under-concurrency.md).
 *
 * PGlite is one backend: every client connection shares its session. pglite-socket forwarded each protocol
 * message on its own, so under concurrency two connections' extended-protocol messages interleaved (one
 * connection's Bind ran against another's unnamed statement), and statement names collided ("prepared
 * statement already exists", 42P05). This server restores what each connection would have on a server:
 * - a **unit** — a simple Query, or every extended-protocol message up to and including Sync — runs whole,
 *   with no other connection's messages in between;
 * - while the session is inside a transaction block (or between a Flush and the Sync that ends it), only the
 *   connection that opened it runs; the others wait, as they would on row locks;
 * - statement and portal **names** live in a namespace per connection (rewritten on the wire), and are
 *   deallocated when the connection closes; a connection that closes inside a transaction is rolled back;
 * - a transaction left idle while others wait longer than `idleInTransactionMs` ends its connection
 *   (PostgreSQL's idle_in_transaction_session_timeout), and one held longer than `transactionMaxMs` is cut
 *   whatever it does, so one stuck client cannot wedge the process;
 * - a session setting changed by one connection (SET, RESET, set_config) lasts until the session is free
 *   again (the end of that unit or transaction), then RESET ALL: it never reaches another connection;
 * - it listens on a Unix socket only (the caller puts it in an owner-only directory) and asks every
 *   connection for the per-start secret; bad lengths, unsupported messages (COPY data, function calls) and a
 *   wrong secret are answered with an error and a closed connection
 *   (docs/decisions/0085-sealed-embedded-database.md), and so is a statement the engine answers by entering
 *   COPY (docs/decisions/0177-copy-refused-by-the-engine-protocol.md).
 */
export interface EmbeddedServerOptions {
  idleInTransactionMs?: number;
  /** A transaction held longer than this is cut (its connection closed, its work rolled back), whatever it does. */
  transactionMaxMs?: number;
  /** A unit of work that ran longer than this is logged: the engine runs on this thread and cannot be interrupted. */
  slowUnitMs?: number;
  /** The secret every connection must give (cleartext over the owner-only socket); none when undefined. */
  password?: string;
  onWarning?: (message: string, detail: Record<string, unknown>) => void;
}

/** Message types that end a unit: the client waits for the server's answer after them. */
const UNIT_END = new Set(["S", "Q", "H"]);
const PASSWORD_ONLY = new Set(["p"]);

interface Unit {
  /** Null for the server's own housekeeping (deallocating a closed connection's statements, resetting settings). */
  conn: Connection | null;
  messages: Buffer[];
  /** Ends with Flush: the extended-protocol sequence goes on in a later unit, up to its Sync. */
  open: boolean;
  /** Holds a statement that may change a session setting: the settings are reset once the session is free. */
  settings?: boolean;
}

type Phase = "startup" | "password" | "ready";

class Connection {
  /**
   * Bytes received and not yet read, kept as the chunks they came in until `need` bytes are there: a message
   * arriving in thousands of chunks is joined once, not once per chunk.
   */
  chunks: Buffer[] = [];
  buffered = 0;
  need = 0;
  phase: Phase = "startup";
  closed = false;
  /** The start-up packet to hand to the engine once the secret is given. */
  startup: Buffer | null = null;
  /** Messages of the unit being received, and whether one of them may change a setting. */
  pending: Buffer[] = [];
  pendingSettings = false;
  /** Named statements prepared on this connection (their session names), to deallocate on close. */
  readonly statements = new Set<string>();
  readonly prefix: string;
  constructor(
    readonly id: number,
    readonly socket: Socket,
  ) {
    this.prefix = `c${id}_`;
  }
}

export class EmbeddedServer {
  private server: Server | null = null;
  private readonly connections = new Set<Connection>();
  private readonly queue: Unit[] = [];
  private running = false;
  /** The connection that holds the session (inside a transaction block or an unfinished extended sequence). */
  private owner: Connection | null = null;
  /** The connection whose unit is running now. */
  private current: Connection | null = null;
  private ownerIdleSince = 0;
  private ownerSince = 0;
  private midExtended = false;
  /** A unit may have changed a session setting: RESET ALL before the next unit once the session is free. */
  private dirty = false;
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly idleInTransactionMs: number;
  private readonly transactionMaxMs: number;
  private readonly slowUnitMs: number;
  private readonly secret: Buffer | null;

  constructor(
    private readonly db: PGlite,
    private readonly opts: EmbeddedServerOptions = {},
  ) {
    this.idleInTransactionMs = opts.idleInTransactionMs ?? 60_000;
    this.transactionMaxMs = opts.transactionMaxMs ?? 30_000;
    this.slowUnitMs = opts.slowUnitMs ?? 5_000;
    this.secret = opts.password === undefined ? null : digest(opts.password);
  }

  /** Listens on a Unix socket at `path` (mode 0600; its directory is the caller's to keep owner-only). */
  async listen(path: string): Promise<void> {
    await this.db.waitReady;
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
    chmodSync(path, 0o600);
    const every = Math.min(1_000, this.idleInTransactionMs, this.transactionMaxMs);
    this.idleTimer = setInterval(() => this.checkOwner(), every);
    this.idleTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.idleTimer) clearInterval(this.idleTimer);
    for (const c of this.connections) c.socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    while (this.running) await new Promise((r) => setTimeout(r, 5));
  }

  /** For /readyz and tests: how many connections and queued units there are. */
  stats(): { connections: number; queued: number; inTransaction: boolean } {
    return { connections: this.connections.size, queued: this.queue.length, inTransaction: this.owner !== null };
  }

  private accept(socket: Socket): void {
    const conn = new Connection(this.nextId++, socket);
    this.connections.add(conn);
    socket.on("data", (chunk: Buffer) => {
      try {
        this.receive(conn, chunk);
      } catch (err) {
        this.refuse(conn, "08P01", `malformed message: ${(err as Error).message}`);
      }
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => this.close(conn));
  }

  private receive(conn: Connection, chunk: Buffer): void {
    if (conn.closed) return; // refused: what still arrives is not kept
    conn.chunks.push(chunk);
    conn.buffered += chunk.length;
    if (conn.buffered < conn.need) return;
    let buffer = conn.chunks.length === 1 ? (conn.chunks[0] as Buffer) : Buffer.concat(conn.chunks, conn.buffered);
    conn.chunks = [];
    conn.buffered = 0;
    conn.need = 0;
    while (!conn.closed && !conn.socket.destroyed) {
      const read =
        conn.phase === "startup"
          ? readStartup(buffer)
          : conn.phase === "password"
            ? readMessage(buffer, PASSWORD_ONLY, MAX_PASSWORD)
            : readMessage(buffer);
      if (read.kind === "more") {
        if (buffer.length > 0) conn.chunks = [buffer];
        conn.buffered = buffer.length;
        conn.need = read.need;
        return;
      }
      if (read.kind === "bad") return this.refuse(conn, read.code, read.message);
      buffer = read.rest;
      if (read.kind === "startup") this.onStartup(conn, read);
      else if (conn.phase === "password") this.onPassword(conn, read.msg);
      else this.onMessage(conn, read.type, read.msg);
    }
  }

  private onStartup(conn: Connection, read: Extract<Read, { kind: "startup" }>): void {
    if (read.code === SSL_REQUEST || read.code === GSS_REQUEST) {
      conn.socket.write("N");
      return;
    }
    if (read.code === CANCEL_REQUEST) {
      conn.socket.destroy(); // cancellation is not supported; the cancelling connection just closes
      return;
    }
    const params = read.code === PROTOCOL_3 ? startupParams(read.msg) : null;
    if (params === null) return this.refuse(conn, "08P01", `unsupported start-up packet (code ${read.code})`);
    conn.startup = startupPacket(params);
    if (this.secret === null) return this.start(conn);
    conn.phase = "password";
    conn.socket.write(passwordRequest());
  }

  private onPassword(conn: Connection, msg: Buffer): void {
    const given = passwordOf(msg);
    if (given === null || this.secret === null || !timingSafeEqual(digest(given), this.secret))
      return this.refuse(conn, "28P01", "password authentication failed");
    this.start(conn);
  }

  private start(conn: Connection): void {
    conn.phase = "ready";
    this.enqueue({ conn, messages: [conn.startup as Buffer], open: false });
    conn.startup = null;
  }

  private onMessage(conn: Connection, type: string, raw: Buffer): void {
    if (type === "X") {
      conn.socket.end();
      return;
    }
    const text = statementText(type, raw);
    if (text !== null && changesSettings(text)) conn.pendingSettings = true;
    conn.pending.push(withCopyFail(type, this.rename(conn, type, raw)));
    if (UNIT_END.has(type)) {
      this.enqueue({ conn, messages: conn.pending, open: type === "H", settings: conn.pendingSettings });
      conn.pending = [];
      conn.pendingSettings = false;
    }
  }

  /** A protocol error: PostgreSQL's FATAL answer, then the connection ends (what it queued is dropped). */
  private refuse(conn: Connection, code: string, message: string): void {
    this.opts.onWarning?.("embedded database: refused a client message", { code, message });
    conn.chunks = [];
    conn.buffered = 0;
    conn.pending = [];
    // Closed both ways once the answer is written: a client still sending (a message refused from its length
    // alone) is not read on.
    if (!conn.socket.destroyed) conn.socket.end(errorResponse("FATAL", code, message)).destroySoon();
    this.close(conn);
  }

  /**
   * Statement and portal names, prefixed per connection. Parse: stmt; Bind: portal, stmt; Describe/Close:
   * kind byte + name; Execute: portal. The unnamed ones ("") stay unnamed: a unit runs whole, so the next
   * connection's Parse cannot replace them mid-sequence.
   */
  private rename(conn: Connection, type: string, msg: Buffer): Buffer {
    switch (type) {
      case "P": {
        const [name, rest] = splitName(msg, 5);
        if (name === "") return msg;
        conn.statements.add(conn.prefix + name);
        return frame(type, [cstr(conn.prefix + name), rest]);
      }
      case "B": {
        const [portal, afterPortal] = splitName(msg, 5);
        const [stmt, rest] = splitName(afterPortal, 0);
        if (portal === "" && stmt === "") return msg;
        return frame(type, [cstr(named(conn, portal)), cstr(named(conn, stmt)), rest]);
      }
      case "D":
      case "C": {
        const kind = msg.subarray(5, 6);
        const [name, rest] = splitName(msg, 6);
        if (name === "") return msg;
        if (type === "C" && kind[0] === 0x53) conn.statements.delete(conn.prefix + name);
        return frame(type, [kind, cstr(conn.prefix + name), rest]);
      }
      case "E": {
        const [portal, rest] = splitName(msg, 5);
        return portal === "" ? msg : frame(type, [cstr(conn.prefix + portal), rest]);
      }
      default:
        return msg;
    }
  }

  private enqueue(unit: Unit): void {
    this.queue.push(unit);
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (;;) {
        const i = this.owner === null ? 0 : this.queue.findIndex((u) => u.conn === this.owner);
        if (i < 0 || this.queue.length === 0) break;
        if (this.dirty && this.owner === null) await this.resetSettings();
        const [unit] = this.queue.splice(i, 1) as [Unit];
        if (unit.conn?.closed) continue;
        await this.run(unit);
      }
    } finally {
      this.running = false;
    }
  }

  private async run(unit: Unit): Promise<void> {
    const { conn } = unit;
    this.current = conn;
    const started = Date.now();
    // The rest of the unit still runs after a copy response (the engine must reach its Sync); the client gets
    // none of it, and the connection is refused below.
    const copy = new CopyWatch();
    try {
      await this.db.runExclusive(async () => {
        for (let i = 0; i < unit.messages.length; i++) {
          await this.db.execProtocolRawStream(unit.messages[i] as Buffer, {
            syncToFs: i === unit.messages.length - 1,
            onRawData: (data) => {
              const passed = copy.pass(data);
              if (conn !== null && !conn.closed && passed.length > 0) conn.socket.write(Buffer.from(passed));
            },
          });
        }
      });
    } catch (err) {
      this.opts.onWarning?.("embedded database: a statement failed inside the engine", { err: String(err) });
      conn?.socket.destroy();
    } finally {
      this.current = null;
    }
    const tookMs = Date.now() - started;
    if (tookMs > this.slowUnitMs)
      this.opts.onWarning?.("embedded database: a statement held the engine (it cannot be interrupted)", { tookMs });
    if (unit.settings === true) this.dirty = true;
    this.midExtended = stillMidExtended(this.midExtended && this.owner === conn && conn !== null, unit);
    const holds = conn !== null && (this.midExtended || this.db.isInTransaction());
    if (holds && this.owner !== conn) this.ownerSince = started;
    this.owner = holds ? conn : null;
    this.ownerIdleSince = Date.now();
    // The connection went away while its unit ran: close() left the release to us.
    if (holds && conn.closed) await this.release(conn);
    else if (copy.seen && conn !== null) this.refuse(conn, "0A000", COPY_REFUSED);
  }

  /** The one shared session back to its defaults, so a setting never outlives the unit or transaction that made it. */
  private async resetSettings(): Promise<void> {
    this.dirty = false;
    await this.db
      .runExclusive(() => this.quietly(frame("Q", [cstr("RESET ALL")])))
      .catch((err: unknown) =>
        this.opts.onWarning?.("embedded database: resetting session settings failed", { err: String(err) }),
      );
  }

  /** Ends the connection holding the session too long: idle while others wait, or past the transaction cap. */
  private checkOwner(): void {
    const owner = this.owner;
    if (owner === null || this.current === owner) return;
    const now = Date.now();
    const waiting = this.queue.some((u) => u.conn !== owner);
    if (waiting && now - this.ownerIdleSince > this.idleInTransactionMs) {
      this.opts.onWarning?.("embedded database: a connection held a transaction idle while others waited; closing it", {
        idleMs: now - this.ownerIdleSince,
      });
      owner.socket.destroy();
    } else if (now - this.ownerSince > this.transactionMaxMs) {
      this.opts.onWarning?.("embedded database: a transaction was held past its limit; closing its connection", {
        heldMs: now - this.ownerSince,
        limitMs: this.transactionMaxMs,
      });
      owner.socket.destroy();
    }
  }

  private close(conn: Connection): void {
    if (conn.closed) return;
    conn.closed = true;
    this.connections.delete(conn);
    for (let i = this.queue.length - 1; i >= 0; i--) if (this.queue[i]?.conn === conn) this.queue.splice(i, 1);
    // If its unit is running now, run() releases what it holds when the unit ends.
    if (this.owner === conn && this.current !== conn) void this.release(conn);
    if (conn.statements.size > 0) {
      const names = [...conn.statements];
      conn.statements.clear();
      this.enqueue({
        conn: null,
        messages: names.map((n) => frame("C", [Buffer.from("S"), cstr(n)])).concat(frame("S", [])),
        open: false,
      });
    }
  }

  /**
   * The server's own statement, its answer dropped. Not execProtocolRaw: PGlite keeps the last stream's output
   * callback and would hand the answer to the connection whose unit ran before.
   */
  private quietly(message: Buffer): Promise<void> {
    return this.db.execProtocolRawStream(message, { syncToFs: false, onRawData: () => undefined });
  }

  /** Ends what a closed connection left open: an unfinished extended sequence, then its transaction. */
  private async release(conn: Connection): Promise<void> {
    if (this.owner !== conn) return;
    await this.db
      .runExclusive(async () => {
        if (this.midExtended) await this.quietly(frame("S", []));
        if (this.db.isInTransaction()) await this.quietly(frame("Q", [cstr("ROLLBACK")]));
      })
      .catch((err: unknown) =>
        this.opts.onWarning?.("embedded database: rollback after a closed connection failed", { err: String(err) }),
      );
    this.midExtended = false;
    this.owner = null;
    void this.drain();
  }
}

/** Extended-protocol messages: after one, the engine owes a Sync (and skips everything but Sync after an error). */
const EXTENDED = new Set(["P", "B", "D", "E", "C", "H"].map((t) => t.charCodeAt(0)));
const SYNC = "S".charCodeAt(0);

/**
 * Whether the engine is still in an extended-protocol sequence after `unit`, given whether it was before. Only a
 * Sync ends one: a simple Query in between does not (after an error the engine ignores it, as it ignores
 * everything up to the Sync), so a connection that sent Parse … Flush, then a Query, still holds the session and
 * its release sends the Sync the engine waits for.
 */
function stillMidExtended(before: boolean, unit: Unit): boolean {
  let mid = before;
  for (const msg of unit.messages) {
    const type = msg[0] as number;
    if (type === SYNC) mid = false;
    else if (EXTENDED.has(type)) mid = true;
  }
  return mid || unit.open;
}

function named(conn: Connection, name: string): string {
  return name === "" ? "" : conn.prefix + name;
}

function digest(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}
