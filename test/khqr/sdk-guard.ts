// The reference SDK (bakong-khqr 1.0.20) loops forever on some malformed strings: its sub-tag
// loop (`while (value) { cutString(value) … }` in controller/decodeKHQR.js and
// decodeValidation.js) makes no progress when a sub-tag's length is not a number, e.g. a
// template whose last sub-object is cut short ("…0211DEVBKKHPXXX5"); its top-level loop spins the
// same way on a tag 30 whose length is not a number ("30xx…"). These predicates replay the
// SDK's own slicing to tell beforehand whether a call would hang, so the cross-check can skip it.
import { crc16, crcToHex } from "../../src/khqr/index.js";

const TEMPLATE_TAGS = new Set(["29", "62", "64", "99"]); // the SDK's `sub: true` tags (30 is read as 29)
const KNOWN_TAGS = new Set(["00", "01", "15", "29", "52", "53", "54", "58", "59", "60", "62", "64", "99", "63"]);

function cut(s: string): { tag: string; value: string; rest: string } {
  const length = parseInt(s.slice(2, 4));
  return { tag: s.slice(0, 2), value: s.slice(4, 4 + length), rest: s.slice(4 + length) };
}

/** True when the SDK's decode would spin on qr. */
export function sdkDecodeHangs(qr: string): boolean {
  let s = qr;
  let last = "";
  const templates: string[] = [];
  while (s) {
    const c = cut(s);
    if (c.tag === last) break;
    const tag = c.tag === "30" ? "29" : c.tag;
    // No progress (a length that is not a number): the SDK stops on the next round because the
    // tag repeats, except for "30", which it renames "29" first, so it never sees the repeat.
    if (c.rest.length >= s.length && tag !== c.tag) return true;
    if (KNOWN_TAGS.has(tag) && TEMPLATE_TAGS.has(tag)) templates.push(c.value);
    s = c.rest;
    last = tag;
  }
  for (let v of templates) {
    while (v) {
      const { rest } = cut(v);
      if (rest.length >= v.length) return true;
      v = rest;
    }
  }
  return false;
}

/** True when the SDK's verify would spin on qr: it reaches the sub-tag loop only past its CRC check. */
export function sdkVerifyHangs(qr: string): boolean {
  if (!/6304[A-Fa-f0-9]{4}$/.test(qr) || qr.length < 12) return false;
  if (crcToHex(crc16(qr, 0, qr.length - 4)) !== qr.slice(-4).toUpperCase()) return false;
  return sdkDecodeHangs(qr);
}
