// CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor) over the UTF-8
// bytes of a string, as EMV QR and the reference SDK (which hashes Buffer.from(string)) compute
// it. UTF-8 is produced on the fly from UTF-16 code units so no byte buffer is allocated; a lone
// surrogate counts as U+FFFD, exactly as Buffer.from/TextEncoder replace it.

const TABLE = new Uint16Array(256);
for (let b = 0; b < 256; b++) {
  let c = b << 8;
  for (let k = 0; k < 8; k++) c = c & 0x8000 ? (c << 1) ^ 0x1021 : c << 1;
  TABLE[b] = c & 0xffff;
}

function step(crc: number, byte: number): number {
  return ((crc << 8) ^ TABLE[((crc >>> 8) ^ byte) & 0xff]) & 0xffff;
}

// Two bytes at a time: after 16 shifts the register has left entirely, so the new register is a
// function of (register XOR the two bytes) alone. 128 KB, built once; halves the work per byte
// on the ASCII text QR payloads are made of.
const PAIR = new Uint16Array(65536);
for (let v = 0; v < 65536; v++) PAIR[v] = step(step(0, v >>> 8), v & 0xff);

/** CRC-16/CCITT-FALSE of the UTF-8 encoding of s[start, end). */
export function crc16(s: string, start = 0, end = s.length): number {
  let crc = 0xffff;
  let i = start;
  for (; i + 1 < end; i += 2) {
    const a = s.charCodeAt(i);
    const b = s.charCodeAt(i + 1);
    if ((a | b) >= 0x80) break;
    crc = PAIR[crc ^ ((a << 8) | b)];
  }
  return i < end ? crc16Utf8(s, i, end, crc) : crc;
}

/** Byte-wise continuation for the rest of the text, encoding non-ASCII code units as UTF-8. */
function crc16Utf8(s: string, start: number, end: number, crc: number): number {
  for (let i = start; i < end; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      crc = step(crc, c);
      continue;
    }
    if (c < 0x800) {
      crc = step(step(crc, 0xc0 | (c >> 6)), 0x80 | (c & 0x3f));
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const low = i + 1 < end ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        crc = step(
          step(step(step(crc, 0xf0 | (cp >> 18)), 0x80 | ((cp >> 12) & 0x3f)), 0x80 | ((cp >> 6) & 0x3f)),
          0x80 | (cp & 0x3f),
        );
        i++;
        continue;
      }
      c = 0xfffd;
    }
    crc = step(step(step(crc, 0xe0 | (c >> 12)), 0x80 | ((c >> 6) & 0x3f)), 0x80 | (c & 0x3f));
  }
  return crc;
}

const HEX = "0123456789ABCDEF";

/** The CRC as the QR carries it: 4 uppercase hex digits. */
export function crcToHex(crc: number): string {
  return HEX[(crc >> 12) & 15] + HEX[(crc >> 8) & 15] + HEX[(crc >> 4) & 15] + HEX[crc & 15];
}

/** Value of the 4 hex digits at s[i, i+4) (either case), or -1 if any is not a hex digit. */
export function readHex4(s: string, i: number): number {
  let v = 0;
  for (let k = i; k < i + 4; k++) {
    const c = s.charCodeAt(k);
    let d: number;
    if (c >= 48 && c <= 57) d = c - 48;
    else if (c >= 65 && c <= 70) d = c - 55;
    else if (c >= 97 && c <= 102) d = c - 87;
    else return -1;
    v = (v << 4) | d;
  }
  return v;
}
