// What the delivery log keeps of one attempt besides its status and latency: the headers sent (the signature
// redacted), and the first 4 KB of the answer's headers and body (credentials redacted). The request body is not
// stored again: it is the event's own bytes (signing.ts deliveryBody), the same for every attempt of a delivery.

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

/** Every occurrence of a secret (an endpoint secret, a signature sent) in text an endpoint sent back. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 8) out = out.split(s).join(REDACTED);
  return out;
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
  return { text: clean(redactText(text, secrets)), truncated };
}
