// EMV QR tag-length-value: a 2-digit id, a 2-digit length (in UTF-16 code units, as the
// reference SDK counts it: String.length) and the value. Readers work on offsets into the
// original string and return packed integers, so scanning allocates nothing.

/** Digit value of the char code, or -1. */
function digit(c: number): number {
  const d = c - 48;
  return d >= 0 && d <= 9 ? d : -1;
}

/**
 * Reads the data object header at s[i]. Returns `id * 100 + length`, or -1 when the header is not
 * 4 digits or the value would run past `end`. The value is s[i + 4, i + 4 + length).
 */
export function readTlv(s: string, i: number, end: number): number {
  if (i + 4 > end) return -1;
  const a = digit(s.charCodeAt(i));
  const b = digit(s.charCodeAt(i + 1));
  const c = digit(s.charCodeAt(i + 2));
  const d = digit(s.charCodeAt(i + 3));
  if ((a | b | c | d) < 0) return -1;
  const len = c * 10 + d;
  if (i + 4 + len > end) return -1;
  return (a * 10 + b) * 100 + len;
}

/** Ids whose value is itself a list of data objects: merchant account templates 26–51, 62, 64 and 80–99. */
export function isTemplateId(id: number): boolean {
  return (id >= 26 && id <= 51) || id === 62 || id === 64 || id >= 80;
}

/** True when s[start, end) is a sequence of complete data objects. */
export function isWellFormed(s: string, start: number, end: number): boolean {
  let i = start;
  while (i < end) {
    const h = readTlv(s, i, end);
    if (h < 0) return false;
    i += 4 + (h % 100);
  }
  return true;
}

/** One data object as text. Lengths over 99 cannot be expressed; callers validate first. */
export function writeTlv(id: string, value: string): string {
  const n = value.length;
  if (n > 99 || id.length !== 2) throw new RangeError(`TLV ${id}: length ${n} does not fit in two digits`);
  return id + (n < 10 ? "0" + n : String(n)) + value;
}
