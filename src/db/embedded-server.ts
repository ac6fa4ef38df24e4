import { createServer, type Server, type Socket } from "node:net";
import type { PGlite } from "@electric-sql/pglite";

/**
 * PostgreSQL's wire protocol in front of one PGlite session, with the session semantics a connection pool
 * expects of a real server (docs/decisions.md, "The embedded database under concurrency").
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
 *   (PostgreSQL's idle_in_transaction_session_timeout), so one stuck client cannot wedge the process.
 */
export interface EmbeddedServerOptions {
  idleInTransactionMs?: number;
  onWarning?: (message: string, detail: Record<string, unknown>) => void;
}

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
const NUL = 0;

/** Message types that end a unit: the client waits for the server's answer after them. */
const UNIT_END = new Set(["S", "Q", "F", "H"]);

interface Unit {
  /** Null for the server's own housekeeping (deallocating a closed connection's statements). */
  conn: Connection | null;
  messages: Buffer[];
  /** Ends with Flush: the extended-protocol sequence goes on in a later unit, up to its Sync. */
  open: boolean;
}

class Connection {
  buffer: Buffer = Buffer.alloc(0);
  started = false;
  closed = false;
  /** Messages of the unit being received. */
  pending: Buffer[] = [];
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
  private midExtended = false;
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly idleInTransactionMs: number;

  constructor(
    private readonly db: PGlite,
    private readonly opts: EmbeddedServerOptions = {},
  ) {
    this.idleInTransactionMs = opts.idleInTransactionMs ?? 60_000;
  }

  async listen(host = "127.0.0.1"): Promise<number> {
    await this.db.waitReady;
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, host, () => resolve());
    });
    this.idleTimer = setInterval(() => this.checkIdleOwner(), Math.min(1_000, this.idleInTransactionMs));
    this.idleTimer.unref();
    const addr = server.address();
    if (addr === null || typeof addr === "string") throw new Error("embedded server has no TCP address");
    return addr.port;
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
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => {
      try {
        this.receive(conn, chunk);
      } catch (err) {
        this.opts.onWarning?.("embedded database: malformed client message", { err: String(err) });
        socket.destroy();
      }
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => this.close(conn));
  }

  private receive(conn: Connection, chunk: Buffer): void {
    conn.buffer = conn.buffer.length === 0 ? chunk : Buffer.concat([conn.buffer, chunk]);
    while (!conn.closed) {
      const b = conn.buffer;
      if (!conn.started) {
        if (b.length < 8) return;
        const len = b.readInt32BE(0);
        if (b.length < len) return;
        const code = b.readInt32BE(4);
        const msg = b.subarray(0, len);
        conn.buffer = b.subarray(len);
        if (code === SSL_REQUEST || code === GSS_REQUEST) {
          conn.socket.write("N");
        } else if (code === CANCEL_REQUEST) {
          conn.socket.destroy(); // cancellation is not supported; the cancelling connection just closes
          return;
        } else if (code === PROTOCOL_3) {
          conn.started = true;
          this.enqueue({ conn, messages: [Buffer.from(msg)], open: false });
        } else {
          throw new Error(`unsupported start-up code ${code}`);
        }
        continue;
      }
      if (b.length < 5) return;
      const len = 1 + b.readInt32BE(1);
      if (b.length < len) return;
      const type = String.fromCharCode(b[0] as number);
      const msg = this.rename(conn, type, Buffer.from(b.subarray(0, len)));
      conn.buffer = b.subarray(len);
      if (type === "X") {
        conn.socket.end();
        return;
      }
      conn.pending.push(msg);
      if (UNIT_END.has(type)) {
        this.enqueue({ conn, messages: conn.pending, open: type === "H" });
        conn.pending = [];
      }
    }
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
    try {
      await this.db.runExclusive(async () => {
        for (let i = 0; i < unit.messages.length; i++) {
          await this.db.execProtocolRawStream(unit.messages[i] as Buffer, {
            syncToFs: i === unit.messages.length - 1,
            onRawData: (data) => {
              if (conn !== null && !conn.closed && data.length > 0) conn.socket.write(Buffer.from(data));
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
    this.midExtended = unit.open;
    const holds = conn !== null && (this.midExtended || this.db.isInTransaction());
    this.owner = holds ? conn : null;
    this.ownerIdleSince = Date.now();
    // The connection went away while its unit ran: close() left the release to us.
    if (holds && conn.closed) await this.release(conn);
  }

  private checkIdleOwner(): void {
    const owner = this.owner;
    if (owner === null || this.running) return;
    const waiting = this.queue.some((u) => u.conn !== owner);
    if (waiting && Date.now() - this.ownerIdleSince > this.idleInTransactionMs) {
      this.opts.onWarning?.("embedded database: a connection held a transaction idle while others waited; closing it", {
        idleMs: Date.now() - this.ownerIdleSince,
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

  /** Ends what a closed connection left open: an unfinished extended sequence, then its transaction. */
  private async release(conn: Connection): Promise<void> {
    if (this.owner !== conn) return;
    await this.db
      .runExclusive(async () => {
        if (this.midExtended) await this.db.execProtocolRaw(frame("S", []), { syncToFs: false });
        if (this.db.isInTransaction()) await this.db.execProtocolRaw(frame("Q", [cstr("ROLLBACK")]));
      })
      .catch((err: unknown) =>
        this.opts.onWarning?.("embedded database: rollback after a closed connection failed", { err: String(err) }),
      );
    this.midExtended = false;
    this.owner = null;
    void this.drain();
  }
}

function named(conn: Connection, name: string): string {
  return name === "" ? "" : conn.prefix + name;
}

/** Reads a NUL-terminated name at `offset`; returns it and the bytes after its terminator. */
function splitName(buf: Buffer, offset: number): [string, Buffer] {
  const end = buf.indexOf(NUL, offset);
  if (end < 0) throw new Error("unterminated name in protocol message");
  return [buf.toString("utf8", offset, end), buf.subarray(end + 1)];
}

function cstr(s: string): Buffer {
  return Buffer.concat([Buffer.from(s, "utf8"), Buffer.from([NUL])]);
}

function frame(type: string, parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
