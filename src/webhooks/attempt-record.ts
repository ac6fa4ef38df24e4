// What the delivery log keeps of one attempt besides its status and latency: the headers sent (the signature
// redacted), and the first 4 KB of the answer's headers and body (credentials redacted, in any common encoding). The
// request body is not stored again: it is the event's own bytes (signing.ts deliveryBody), the same for every attempt
// of a delivery.

/** How much of an answer's body, and of its headers, an attempt keeps. */
export const ATTEMPT_KEEP_BYTES = 4096;

export const REDACTED = "[redacted]";

/** Headers whose value is a credential, in either direction. */
const SECRET_HEADERS = new Set([
  "x-signature",
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
]);

export interface HeaderLine {
  name: string;
  value: string;
}

/**
 * Every occurrence of a secret (an endpoint secret, a signature sent) in text an endpoint sent back, in any of the
 * forms an endpoint may echo it in (hiddenForms), whatever the letter case
 * (docs/decisions/0179-redaction-in-every-encoding.md).
 */
export function redactText(text: string, secrets: readonly string[]): string {
  const forms = formsOf(secrets);
  if (forms.length === 0) return text;
  // Found in a lower-cased copy whose every index is the same character's index in `text`.
  const folded = asciiLower(text);
  const ranges: [number, number][] = [];
  for (const form of forms)
    for (let at = folded.indexOf(form); at >= 0; at = folded.indexOf(form, at + 1)) ranges.push([at, at + form.length]);
  if (ranges.length === 0) return text;
  ranges.sort((a, b) => a[0] - b[0]);
  let out = "";
  let done = 0;
  for (const [start, end] of ranges) {
    if (end <= done) continue;
    out += start > done ? text.slice(done, start) + REDACTED : done === 0 ? REDACTED : "";
    done = end;
  }
  return out + text.slice(done);
}

/**
 * `text` in lower case with every character where it was: toLowerCase, unless it changed the length (`İ` becomes two
 * characters), then ASCII letters only.
 */
function asciiLower(text: string): string {
  const lower = text.toLowerCase();
  return lower.length === text.length ? lower : text.replace(/[A-Z]+/g, (run) => run.toLowerCase());
}

/** Forms shorter than this are not redacted: they would hide ordinary text. */
const MIN_FORM = 8;

/** A secret's `name_` prefix (`whsec_`), which an endpoint may drop. */
const PREFIX = /^[A-Za-z0-9]{2,10}_/;

/**
 * The forms of a hidden value an endpoint may echo: as sent; without its prefix; its text in hex, base64 and base64url
 * (also where it sits inside a longer encoded text: base64 at each of its three alignments); the bytes it stands for
 * when it is hex or base64 itself (a signature's digest in base64, a secret's bytes in hex); and each of those
 * URL-encoded or JSON-escaped (`/` as `\/`). Matched without regard to case, so upper-cased hex is one of them.
 */
export function hiddenForms(secret: string): string[] {
  const texts = [secret];
  if (PREFIX.test(secret) && secret.replace(PREFIX, "").length >= MIN_FORM) texts.push(secret.replace(PREFIX, ""));
  const encoded = new Set<string>();
  for (const text of texts) {
    for (const bytes of [Buffer.from(text, "utf8"), ...bytesBehind(text)]) {
      encoded.add(bytes.toString("hex"));
      for (const form of base64Middles(bytes)) encoded.add(form);
    }
    encoded.add(text);
  }
  const forms = new Set<string>();
  for (const form of encoded) {
    forms.add(form);
    if (/[^\w.!~*'()-]/.test(form)) forms.add(encodeURIComponent(form));
    const json = JSON.stringify(form).slice(1, -1).replace(/\//g, "\\/");
    if (json !== form) forms.add(json);
  }
  return [...forms].filter((f) => f.length >= MIN_FORM);
}

/** The bytes a value is an encoding of: hex (a signature), base64 or base64url (a secret's random part). */
function bytesBehind(value: string): Buffer[] {
  if (/^([0-9a-f]{2})+$/i.test(value)) return [Buffer.from(value, "hex")];
  const b64 = value.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  if (!/^[A-Za-z0-9+/]+$/.test(b64) || b64.length % 4 === 1) return [];
  const bytes = Buffer.from(b64, "base64");
  return bytes.toString("base64").replace(/=+$/, "") === b64 ? [bytes] : [];
}

/**
 * `bytes` in base64 and base64url at each alignment: encoded after 0, 1 or 2 other bytes, the characters that
 * depend on these bytes alone. So a secret is found inside a longer base64 text (an echoed JSON body, encoded).
 */
function base64Middles(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let k = 0; k < 3; k++) {
    const start = Math.ceil((8 * k) / 6);
    const end = Math.floor((8 * (k + bytes.length)) / 6);
    const padded = Buffer.alloc(k + bytes.length);
    bytes.copy(padded, k);
    for (const encoding of ["base64", "base64url"] as const) out.push(padded.toString(encoding).slice(start, end));
  }
  return out;
}

/**
 * The forms of a list of hidden values, folded to lower case; kept per list (a delivery passes one
 * list to its headers and its body) and per value (an endpoint's secret signs many deliveries).
 */
const perList = new WeakMap<readonly string[], string[]>();
const perValue = new Map<string, string[]>();

function formsOf(secrets: readonly string[]): string[] {
  const known = perList.get(secrets);
  if (known !== undefined) return known;
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_FORM) continue;
    let mine = perValue.get(secret);
    if (mine === undefined) {
      mine = hiddenForms(secret).map(asciiLower);
      if (perValue.size >= 1000) perValue.clear();
      perValue.set(secret, mine);
    }
    for (const form of mine) forms.add(form);
  }
  const list = [...forms];
  perList.set(secrets, list);
  return list;
}

/**
 * A kept text cut at the limit may end in the first characters of a hidden form (at least 4 of them): they are
 * redacted too.
 */
function redactCutEnd(text: string, secrets: readonly string[]): string {
  const tail = asciiLower(text.slice(-64));
  let cut = 0;
  for (const form of formsOf(secrets))
    for (let n = Math.min(form.length - 1, tail.length); n >= 4 && n > cut; n--)
      if (tail.endsWith(form.slice(0, n))) cut = n;
  return cut === 0 ? text : text.slice(0, text.length - cut) + REDACTED;
}

/**
 * Headers as lines (a repeated header once per value), credential values redacted, secrets echoed anywhere
 * redacted, and no more than ATTEMPT_KEEP_BYTES of names and values in all (the rest is dropped, said by the last
 * line).
 */
export function headerLines(
  headers: Record<string, string | string[] | undefined>,
  secrets: readonly string[],
): HeaderLine[] {
  const lines: HeaderLine[] = [];
  let bytes = 0;
  for (const [rawName, raw] of Object.entries(headers)) {
    const name = rawName.toLowerCase();
    for (const v of raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]) {
      const value = SECRET_HEADERS.has(name) ? REDACTED : clean(redactText(v, secrets));
      bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
      if (bytes > ATTEMPT_KEEP_BYTES) {
        lines.push({ name: "…", value: "further headers not kept (4 KB)" });
        return lines;
      }
      lines.push({ name, value });
    }
  }
  return lines;
}

/** Text PostgreSQL can store: no NUL (a binary answer keeps its readable part, NULs shown as U+FFFD). */
function clean(text: string): string {
  return text.includes("\u0000") ? text.split("\u0000").join("\uFFFD") : text;
}

export interface KeptBody {
  text: string;
  /** The answer was longer than what was kept. */
  truncated: boolean;
}

/** Past this much, the rest of an answer is not read: the connection is closed instead of drained. */
const DRAIN_BYTES = 128 * 1024;

/**
 * The first ATTEMPT_KEEP_BYTES of an answer's body, as UTF-8 (a character cut at the limit is dropped), secrets
 * redacted. The rest is read and thrown away (so the connection can serve the next delivery) up to 128 KB; an
 * endless answer ends the loop, which closes the connection.
 */
export async function keepBody(
  body: AsyncIterable<Buffer | Uint8Array>,
  secrets: readonly string[],
): Promise<KeptBody> {
  const parts: Buffer[] = [];
  let kept = 0;
  let total = 0;
  for await (const chunk of body) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    total += b.length;
    if (kept < ATTEMPT_KEEP_BYTES) {
      const take = b.subarray(0, ATTEMPT_KEEP_BYTES - kept);
      parts.push(take);
      kept += take.length;
    }
    if (total > DRAIN_BYTES) break;
  }
  const truncated = total > kept;
  const decoded = new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(parts, kept));
  // A multi-byte character cut by the limit decodes as one U+FFFD at the very end: dropped.
  const text = truncated ? decoded.replace(/\uFFFD$/, "") : decoded;
  const redacted = redactText(text, secrets);
  return { text: clean(truncated ? redactCutEnd(redacted, secrets) : redacted), truncated };
}
