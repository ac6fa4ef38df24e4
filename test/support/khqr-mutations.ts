// Structure-aware mutations of KHQR strings: the QR is read into data objects (test-side reader), edited
// as data objects (lengths that lie, tags dropped, repeated, reordered, renamed, values replaced, nested
// templates corrupted), written back, and usually given a correct CRC again so the reader's deeper rules
// are reached instead of stopping at the checksum.
import fc from "fast-check";

export interface Tlv {
  id: string;
  value: string | Tlv[];
  lenLie?: number;
}

const TEMPLATE = (id: number) => (id >= 26 && id <= 51) || id === 62 || id === 64 || id >= 80;

/** Reads data objects; templates are read one level down. Null if the text is not a clean TLV sequence. */
export function readTlvs(s: string, nested = true): Tlv[] | null {
  const out: Tlv[] = [];
  let i = 0;
  while (i < s.length) {
    if (!/^\d{4}$/.test(s.slice(i, i + 4))) return null;
    const id = s.slice(i, i + 2);
    const len = Number(s.slice(i + 2, i + 4));
    const value = s.slice(i + 4, i + 4 + len);
    if (value.length !== len) return null;
    const inner = nested && TEMPLATE(Number(id)) ? readTlvs(value, false) : null;
    out.push({ id, value: inner ?? value });
    i += 4 + len;
  }
  return out;
}

export function writeTlvs(list: Tlv[]): string {
  return list
    .map((t) => {
      const v = typeof t.value === "string" ? t.value : writeTlvs(t.value);
      const len = t.lenLie ?? v.length;
      return `${t.id}${String(len % 100).padStart(2, "0")}${v}`;
    })
    .join("");
}

/** CRC-16/CCITT-FALSE over UTF-8 (lone surrogates as U+FFFD, as Buffer.from writes them): written here, not imported from src. */
export function crc16Hex(s: string): string {
  let crc = 0xffff;
  for (const b of Buffer.from(s, "utf8")) {
    crc ^= b << 8;
    for (let k = 0; k < 8; k++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, "0");
}

/** Replaces a trailing CRC data object (or appends one) with the right checksum. */
export function fixCrc(s: string): string {
  const body = /6304[0-9A-Fa-f]{4}$/.test(s) ? s.slice(0, -8) : s;
  return `${body}6304${crc16Hex(`${body}6304`)}`;
}

const text = fc.oneof(
  fc.stringMatching(/^\d{0,20}$/),
  fc.string({ unit: "grapheme-ascii", maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.constantFrom(
    "",
    "0",
    "00",
    "-1",
    "1.5",
    "1.555",
    "0.00",
    "1e3",
    "99999999999999",
    "KH",
    "US",
    "840",
    "116",
    "999",
    "5999",
    "12",
    "11",
    "13",
    "01",
    "a@b",
    "@",
    "x".repeat(99),
    "ក្រុមហ៊ុន",
    "\u0000",
    "\ud800",
  ),
);
const anyId = fc.oneof(
  fc.integer({ min: 0, max: 99 }).map((n) => String(n).padStart(2, "0")),
  fc.constantFrom("29", "30", "62", "63", "64", "99", "54", "53", "00", "01"),
);

export type Edit =
  | { op: "lenLie"; at: number; sub: number | null; len: number }
  | { op: "drop"; at: number; sub: number | null }
  | { op: "dup"; at: number; sub: number | null }
  | { op: "swap"; at: number }
  | { op: "value"; at: number; sub: number | null; value: string }
  | { op: "id"; at: number; sub: number | null; id: string }
  | { op: "insert"; at: number; sub: number | null; id: string; value: string }
  | { op: "char"; at: number; kind: "flip" | "insert" | "delete" | "truncate"; ch: string };

export const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    op: fc.constant("lenLie" as const),
    at: fc.nat(),
    sub: fc.option(fc.nat(), { nil: null }),
    len: fc.integer({ min: 0, max: 99 }),
  }),
  fc.record({ op: fc.constant("drop" as const), at: fc.nat(), sub: fc.option(fc.nat(), { nil: null }) }),
  fc.record({ op: fc.constant("dup" as const), at: fc.nat(), sub: fc.option(fc.nat(), { nil: null }) }),
  fc.record({ op: fc.constant("swap" as const), at: fc.nat() }),
  fc.record({ op: fc.constant("value" as const), at: fc.nat(), sub: fc.option(fc.nat(), { nil: null }), value: text }),
  fc.record({ op: fc.constant("id" as const), at: fc.nat(), sub: fc.option(fc.nat(), { nil: null }), id: anyId }),
  fc.record({
    op: fc.constant("insert" as const),
    at: fc.nat(),
    sub: fc.option(fc.nat(), { nil: null }),
    id: anyId,
    value: text,
  }),
  fc.record({
    op: fc.constant("char" as const),
    at: fc.nat(),
    kind: fc.constantFrom("flip" as const, "insert" as const, "delete" as const, "truncate" as const),
    ch: fc.oneof(
      fc.constantFrom("0", "9", "A", "6", "3", "\u0000", "é", "😀", "\ud800"),
      fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
    ),
  }),
);

/** Applies edits to a valid QR; the result is any string. */
export function mutate(qr: string, edits: Edit[]): string {
  let s = qr;
  for (const e of edits) {
    if (e.op === "char") {
      const i = s.length === 0 ? 0 : e.at % s.length;
      s =
        e.kind === "flip"
          ? s.slice(0, i) + e.ch + s.slice(i + 1)
          : e.kind === "insert"
            ? s.slice(0, i) + e.ch + s.slice(i)
            : e.kind === "delete"
              ? s.slice(0, i) + s.slice(i + 1)
              : s.slice(0, i);
      continue;
    }
    const list = readTlvs(s);
    if (list === null || list.length === 0) continue; // earlier edits broke the structure: leave it
    const i = e.at % list.length;
    if (e.op === "swap") {
      const j = (i + 1) % list.length;
      [list[i], list[j]] = [list[j], list[i]];
      s = writeTlvs(list);
      continue;
    }
    // The target list: the top level, or the sub-objects of a template.
    let target = list;
    let k = i;
    if (e.sub !== null && Array.isArray(list[i].value) && list[i].value.length > 0) {
      target = list[i].value as Tlv[];
      k = e.sub % target.length;
    }
    switch (e.op) {
      case "lenLie":
        target[k] = { ...target[k], lenLie: e.len };
        break;
      case "drop":
        target.splice(k, 1);
        break;
      case "dup":
        target.splice(k, 0, structuredClone(target[k]));
        break;
      case "value":
        target[k] = { id: target[k].id, value: e.value.slice(0, 99) };
        break;
      case "id":
        target[k] = { ...target[k], id: e.id };
        break;
      case "insert":
        target.splice(k, 0, { id: e.id, value: e.value.slice(0, 99) });
        break;
    }
    s = writeTlvs(list);
  }
  return s;
}
