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

/** What a client may send once started: simple and extended query, sync/flush, terminate. */
const ALLOWED = new Set(["Q", "P", "B", "D", "E", "C", "S", "H", "X"]);

/** Start-up parameters passed on to the engine; anything else (`options=-c …` above all) is dropped. */
const STARTUP_PARAMS = new Set(["user", "database", "client_encoding", "application_name", "DateStyle", "TimeZone"]);

export type Read =
  | { kind: "more" }
  | { kind: "bad"; code: string; message: string }
  | { kind: "startup"; code: number; msg: Buffer; rest: Buffer }
  | { kind: "message"; type: string; msg: Buffer; rest: Buffer };

/** The first message of a connection: a length, a code, and for PROTOCOL_3 the parameters. */
export function readStartup(buf: Buffer): Read {
  if (buf.length < 8) return { kind: "more" };
  const len = buf.readInt32BE(0);
  if (len < 8 || len > MAX_STARTUP) return bad("08P01", `invalid start-up packet length ${len}`);
  if (buf.length < len) return { kind: "more" };
  return { kind: "startup", code: buf.readInt32BE(4), msg: Buffer.from(buf.subarray(0, len)), rest: buf.subarray(len) };
}

/** One message after start-up: a type byte, then a length that counts itself (so at least 4). */
export function readMessage(buf: Buffer, allowed: ReadonlySet<string> = ALLOWED): Read {
  if (buf.length < 5) return { kind: "more" };
  const type = String.fromCharCode(buf[0] as number);
  const len = buf.readInt32BE(1);
  if (!allowed.has(type))
    return bad("0A000", `message type ${JSON.stringify(type)} is not supported by the embedded database`);
  if (len < 4 || len > MAX_MESSAGE) return bad("08P01", `invalid message length ${len}`);
  if (buf.length < len + 1) return { kind: "more" };
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

/** The statements of a text, each with its leading comments and blanks taken off (a `;` in a literal splits too: harmless here). */
function statements(text: string): string[] {
  return text.split(";").map((s) => s.replace(/^(\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?\*\/)*/, "").toLowerCase());
}

/**
 * COPY … FROM STDIN makes the engine end the whole process (exit(1) inside PGlite), so no COPY reaches it:
 * the service never sends one.
 */
export function isCopy(text: string): boolean {
  return statements(text).some((s) => /^copy\b/.test(s));
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
