import { randomBytes } from "node:crypto";

/**
 * JSON values that remember the exact text they were read from, so `meta` leaves the service exactly as
 * it arrived: key order (JavaScript objects put integer-like keys such as "2" and "10" first, whatever
 * order they were sent in), number text (1.50, 1e3, 12345678901234567890) and escapes. Objects and arrays
 * parsed here are ordinary values for the code that reads them; a side table (a WeakMap, so nothing leaks)
 * holds their source text, and `stringifyExact` writes that text instead of re-serialising them.
 * Insignificant whitespace is dropped; every token is kept as sent. Such values are read-only by
 * convention: a changed copy is a new object and serialises from its content.
 */

/** Objects and arrays down to this depth (the root is 0) are annotated: meta sits at depth 1 to 3 in every document we read. */
const ANNOTATE_DEPTH = 4;

interface Source {
  text: string;
  minified: boolean;
}
const sources = new WeakMap<object, Source>();

/** A per-process marker: a string value no client can forge, standing in for an exact text during JSON.stringify. */
const MARK = `\u0000exact-${randomBytes(8).toString("hex")}:`;
const MARK_JSON = JSON.stringify(MARK).slice(1, -1);
const MARKED = new RegExp(`"${MARK_JSON.replace(/\\/g, "\\\\")}((?:[^"\\\\]|\\\\.)*)"`, "g");

/** JSON.parse, with the exact source text of every object and array (to depth 4) remembered. */
export function parseExact(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (value !== null && typeof value === "object" && JSON.stringify(value) !== text) annotate(value, text);
  return value;
}

/** Remembers, for `value` (JSON.parse of `text`), the source text of each object and array in it. */
export function annotate(value: unknown, text: string): void {
  try {
    walk(value, text, skipWs(text, 0), 0);
  } catch {
    // Only text that is not the JSON of `value` gets here: it then serialises from its content, as before.
  }
}

/** The exact (whitespace-free) text `value` was read from, if it was read by parseExact/annotate. */
export function exactSource(value: unknown): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const s = sources.get(value);
  if (s === undefined) return undefined;
  if (!s.minified) {
    s.text = minify(s.text);
    s.minified = true;
  }
  return s.text;
}

/** JSON text of `value`, writing every annotated object or array (at any depth) exactly as it was read. */
export function stringifyExact(value: unknown): string {
  const out = JSON.stringify(value, exactReplacer);
  return out === undefined || !out.includes(MARK_JSON) ? out : spliceExact(out);
}

/** For JSON.stringify callers we do not own (graphql-ws): pair it with `spliceExact` on the text it produced. */
export function exactReplacer(this: unknown, _key: string, v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  const text = exactSource(v);
  return text === undefined ? v : MARK + text;
}

/** Replaces the markers `exactReplacer` left in a JSON text by the exact texts they carry. */
export function spliceExact(json: string): string {
  if (!json.includes(MARK_JSON)) return json;
  return json.replace(MARKED, (_m, body: string) => JSON.parse(`"${body}"`) as string);
}

function walk(value: unknown, text: string, i: number, depth: number): number {
  const c = text.charCodeAt(i);
  if (c !== 123 /* { */ && c !== 91 /* [ */) return skipValue(text, i);
  if (value === null || typeof value !== "object" || depth >= ANNOTATE_DEPTH) {
    const end = skipValue(text, i);
    if (value !== null && typeof value === "object") sources.set(value, { text: text.slice(i, end), minified: false });
    return end;
  }
  const start = i;
  i = skipWs(text, i + 1);
  if (c === 91) {
    const arr = value as unknown[];
    for (let n = 0; text.charCodeAt(i) !== 93; n++) {
      i = skipWs(text, walk(arr[n], text, i, depth + 1));
      if (text.charCodeAt(i) === 44) i = skipWs(text, i + 1);
    }
  } else {
    const obj = value as Record<string, unknown>;
    while (text.charCodeAt(i) !== 125) {
      const keyEnd = skipString(text, i);
      const raw = text.slice(i + 1, keyEnd - 1);
      const key = raw.includes("\\") ? (JSON.parse(text.slice(i, keyEnd)) as string) : raw;
      i = skipWs(text, keyEnd);
      i = skipWs(text, i + 1); // the colon
      const own = Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
      i = skipWs(text, walk(own, text, i, depth + 1));
      if (text.charCodeAt(i) === 44) i = skipWs(text, i + 1);
    }
  }
  sources.set(value, { text: text.slice(start, i + 1), minified: false });
  return i + 1;
}

function skipWs(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) i++;
    else return i;
  }
}

/** `i` at an opening quote; returns the index after the closing one. */
function skipString(text: string, i: number): number {
  if (text.charCodeAt(i) !== 34) throw new Error("expected a string");
  for (i++; ; i++) {
    const c = text.charCodeAt(i);
    if (Number.isNaN(c)) throw new Error("unterminated string");
    if (c === 92) i++;
    else if (c === 34) return i + 1;
  }
}

/** Any value, iteratively (nesting may be deep); returns the index after it. */
function skipValue(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === 34) return skipString(text, i);
  if (first !== 123 && first !== 91) {
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 44 || c === 125 || c === 93 || c === 32 || c === 10 || c === 13 || c === 9) break;
    }
    return i;
  }
  for (let depth = 0; ;) {
    const c = text.charCodeAt(i);
    if (Number.isNaN(c)) throw new Error("unexpected end");
    if (c === 34) {
      i = skipString(text, i);
      continue;
    }
    if (c === 123 || c === 91) depth++;
    else if ((c === 125 || c === 93) && --depth === 0) return i + 1;
    i++;
  }
}

/** Drops whitespace outside strings; every token stays as written. */
export function minify(text: string): string {
  if (!/[ \n\r\t]/.test(text)) return text;
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i);
    if (c === 34) i = skipString(text, i);
    else if (c === 32 || c === 10 || c === 13 || c === 9) {
      out += text.slice(from, i);
      i = skipWs(text, i);
      from = i;
    } else i++;
  }
  return out + text.slice(from);
}

/**
 * The first key that appears twice in one object of a JSON text, or null (`{"amount":1,"amount":1000000}`
 * would otherwise mean its last value). The text is valid JSON already (parsed before).
 */
export function duplicateKey(text: string): string | null {
  const stack: (Set<string> | null)[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const raw = text.slice(i, j + 1);
      i = j + 1;
      const top = stack[stack.length - 1];
      if (top) {
        let k = i;
        while (k < text.length && /\s/.test(text[k] as string)) k++;
        if (text[k] === ":") {
          const key = JSON.parse(raw) as string;
          if (top.has(key)) return key;
          top.add(key);
        }
      }
      continue;
    }
    if (c === "{") stack.push(new Set());
    else if (c === "[") stack.push(null);
    else if (c === "}" || c === "]") stack.pop();
    i++;
  }
  return null;
}
