/**
 * PostgreSQL wire-protocol framing for the embedded database's front (embedded-server.ts): reading a client's
 * messages with their lengths checked, the few server messages the front writes itself, and the checks on
 * statement texts. No I/O here: a bad length or an unsupported message is a value the server answers with an
 * error and a closed connection, never a loop or a crash of the engine.
 */

export const SSL_REQUEST = 80877103;
export const GSS_REQUEST = 80877104;
export const CANCEL_REQUEST = 80877102;
export const PROTOCOL_3 = 196608;
const NUL = 0;

/** A start-up packet is a few parameters; PostgreSQL itself refuses one over 10,000 bytes. */
const MAX_STARTUP = 10_000;
/** No statement of ours comes near this; a bigger length is a broken or hostile client, not a big query. */
export const MAX_MESSAGE = 32 * 1024 * 1024;
/**
 * The password message carries the per-start secret (48 characters): a longer one is refused from its length
 * alone, before anything is buffered or anyone has authenticated.
 */
export const MAX_PASSWORD = 1024;

/** What a client may send once started: simple and extended query, sync/flush, terminate. */
const ALLOWED = new Set(["Q", "P", "B", "D", "E", "C", "S", "H", "X"]);

/** Start-up parameters passed on to the engine; anything else (`options=-c …` above all) is dropped. */
const STARTUP_PARAMS = new Set(["user", "database", "client_encoding", "application_name", "DateStyle", "TimeZone"]);

export type Read =
  /** `need`: how many bytes the buffer must hold before reading again is worth it. */
  | { kind: "more"; need: number }
  | { kind: "bad"; code: string; message: string }
  | { kind: "startup"; code: number; msg: Buffer; rest: Buffer }
  | { kind: "message"; type: string; msg: Buffer; rest: Buffer };

/** The first message of a connection: a length, a code, and for PROTOCOL_3 the parameters. */
export function readStartup(buf: Buffer): Read {
  if (buf.length < 8) return { kind: "more", need: 8 };
  const len = buf.readInt32BE(0);
  if (len < 8 || len > MAX_STARTUP) return bad("08P01", `invalid start-up packet length ${len}`);
  if (buf.length < len) return { kind: "more", need: len };
  return { kind: "startup", code: buf.readInt32BE(4), msg: Buffer.from(buf.subarray(0, len)), rest: buf.subarray(len) };
}

/**
 * One message after start-up: a type byte, then a length that counts itself (so at least 4) and at most `max`.
 * The type and the length are checked as soon as the five header bytes are in, before the body is waited for.
 */
export function readMessage(buf: Buffer, allowed: ReadonlySet<string> = ALLOWED, max = MAX_MESSAGE): Read {
  if (buf.length < 1) return { kind: "more", need: 5 };
  const type = String.fromCharCode(buf[0] as number);
  if (!allowed.has(type))
    return bad("0A000", `message type ${JSON.stringify(type)} is not supported by the embedded database`);
  if (buf.length < 5) return { kind: "more", need: 5 };
  const len = buf.readInt32BE(1);
  if (len < 4 || len > max) return bad("08P01", `invalid message length ${len}`);
  if (buf.length < len + 1) return { kind: "more", need: len + 1 };
  return { kind: "message", type, msg: Buffer.from(buf.subarray(0, len + 1)), rest: buf.subarray(len + 1) };
}

/** The start-up parameters as pairs, or null when the packet is malformed. */
export function startupParams(msg: Buffer): Map<string, string> | null {
  const params = new Map<string, string>();
  let at = 8;
  for (;;) {
    const keyEnd = msg.indexOf(NUL, at);
    if (keyEnd < 0) return null;
    if (keyEnd === at) return at === msg.length - 1 ? params : null;
    const valueEnd = msg.indexOf(NUL, keyEnd + 1);
    if (valueEnd < 0) return null;
    params.set(msg.toString("utf8", at, keyEnd), msg.toString("utf8", keyEnd + 1, valueEnd));
    at = valueEnd + 1;
  }
}

/** A PROTOCOL_3 start-up packet carrying only the parameters the engine may see. */
export function startupPacket(params: Map<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [k, v] of params) if (STARTUP_PARAMS.has(k)) parts.push(cstr(k), cstr(v));
  parts.push(Buffer.from([NUL]));
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(8);
  head.writeInt32BE(body.length + 8, 0);
  head.writeInt32BE(PROTOCOL_3, 4);
  return Buffer.concat([head, body]);
}

/** AuthenticationCleartextPassword: over an owner-only Unix socket the secret never crosses a network. */
export function passwordRequest(): Buffer {
  return frame("R", [int32(3)]);
}

/** The password of a PasswordMessage ('p'), or null when it is malformed. */
export function passwordOf(msg: Buffer): string | null {
  const end = msg.indexOf(NUL, 5);
  return end < 0 ? null : msg.toString("utf8", 5, end);
}

/** ErrorResponse, as PostgreSQL writes it: severity, SQLSTATE, message. */
export function errorResponse(severity: "ERROR" | "FATAL", code: string, message: string): Buffer {
  const field = (tag: string, value: string) => Buffer.concat([Buffer.from(tag, "latin1"), cstr(value)]);
  return frame("E", [
    field("S", severity),
    field("V", severity),
    field("C", code),
    field("M", message),
    Buffer.from([NUL]),
  ]);
}

/** The SQL text of a Query ('Q') or Parse ('P') message, else null. */
export function statementText(type: string, msg: Buffer): string | null {
  if (type === "Q") return msg.toString("utf8", 5, Math.max(5, msg.length - 1));
  if (type !== "P") return null;
  const nameEnd = msg.indexOf(NUL, 5);
  const textEnd = nameEnd < 0 ? -1 : msg.indexOf(NUL, nameEnd + 1);
  return textEnd < 0 ? null : msg.toString("utf8", nameEnd + 1, textEnd);
}

/**
 * The statements of a text, each with its leading blanks and comments taken off, lower-cased. Comments as the
 * engine reads them: `--` to the end of the line (LF or CR), `/* … *\/` nested. A `;` in a literal splits
 * too: for the settings check below that only means an extra RESET ALL.
 */
function statements(text: string): string[] {
  return text.split(";").map((s) => s.slice(leadingBlanks(s)).toLowerCase());
}

/** How many characters of blanks and comments `s` starts with. */
function leadingBlanks(s: string): number {
  let at = 0;
  for (;;) {
    const blank = /^\s+/.exec(s.slice(at));
    if (blank) at += blank[0].length;
    else if (s.startsWith("--", at)) {
      const end = s.slice(at).search(/[\n\r]/);
      if (end < 0) return s.length;
      at += end + 1;
    } else if (s.startsWith("/*", at)) {
      let depth = 0;
      do {
        const step = s.startsWith("/*", at) ? 1 : s.startsWith("*/", at) ? -1 : 0;
        depth += step;
        at += step === 0 ? 1 : 2;
      } while (depth > 0 && at < s.length);
      if (depth > 0) return s.length;
    } else return at;
  }
}

/**
 * The engine's copy sub-protocol, refused by watching the engine rather than by reading statement texts
 * (docs/decisions/0177-copy-refused-by-the-engine-protocol.md): every Query and Execute reaches the engine
 * followed by this CopyFail. A statement that entered COPY FROM STDIN reads it as its data and fails (57014)
 * instead of waiting for data that never comes, which ends the engine; anything else ignores it, as the
 * protocol says a server outside COPY does.
 */
export const COPY_REFUSED = "COPY is not supported by the embedded database";
const COPY_FAIL = frame("f", [cstr(COPY_REFUSED)]);

/** A client's message as the engine gets it: a Query or an Execute is followed by COPY_FAIL. */
export function withCopyFail(type: string, msg: Buffer): Buffer {
  return type === "Q" || type === "E" ? Buffer.concat([msg, COPY_FAIL]) : msg;
}

/** CopyInResponse, CopyOutResponse, CopyBothResponse: the engine entered a copy sub-protocol. */
const COPY_RESPONSES = new Set([0x47, 0x48, 0x57]);

/**
 * Follows the engine's answer to one unit across the chunks it comes in: everything before a copy response is
 * passed on, nothing from it on (the connection is then refused). Only message headers are read.
 */
export class CopyWatch {
  /** The engine answered with a copy response. */
  seen = false;
  /** Body bytes of the current message still to come. */
  private body = 0;
  /** Header bytes of the current message read so far (a header may be split across chunks). */
  private readonly head = Buffer.alloc(5);
  private headAt = 0;

  /** The part of `chunk` the client may have. */
  pass(chunk: Uint8Array): Uint8Array {
    if (this.seen) return chunk.subarray(0, 0);
    let at = 0;
    while (at < chunk.length) {
      if (this.body > 0) {
        const n = Math.min(this.body, chunk.length - at);
        this.body -= n;
        at += n;
        continue;
      }
      if (this.headAt === 0 && COPY_RESPONSES.has(chunk[at] as number)) {
        this.seen = true;
        return chunk.subarray(0, at);
      }
      this.head[this.headAt++] = chunk[at++] as number;
      if (this.headAt === 5) {
        this.body = this.head.readInt32BE(1) - 4;
        this.headAt = 0;
      }
    }
    return chunk;
  }
}

/** A statement that may change a session setting, which on the one shared session would reach every connection. */
export function changesSettings(text: string): boolean {
  return /\bset_config\s*\(/i.test(text) || statements(text).some((s) => /^(set|reset)\b/.test(s));
}

export function cstr(s: string): Buffer {
  return Buffer.concat([Buffer.from(s, "utf8"), Buffer.from([NUL])]);
}

export function frame(type: string, parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/** Reads a NUL-terminated name at `offset`; returns it and the bytes after its terminator. */
export function splitName(buf: Buffer, offset: number): [string, Buffer] {
  const end = buf.indexOf(NUL, offset);
  if (end < 0) throw new Error("unterminated name in protocol message");
  return [buf.toString("utf8", offset, end), buf.subarray(end + 1)];
}

function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n, 0);
  return b;
}

function bad(code: string, message: string): Read {
  return { kind: "bad", code, message };
}
