// The validating reader shared by decode and verify. One pass over the string records where each
// known value starts and ends (slots.ts), then the CRC and the field rules (check-fields.ts) are
// checked on those offsets. The result is an error code: 0 = valid KHQR, expiry not judged.

import { checkFields } from "./check-fields.js";
import { crc16, readHex4 } from "./crc.js";
import { E } from "./errors.js";
import {
  at,
  K_ACCOUNT,
  K_ADDITIONAL,
  K_LANGUAGE,
  K_TIMESTAMP,
  lastScan,
  S_ACCOUNT,
  S_AMOUNT,
  S_CRC,
  S_CREATED,
  S_EXPIRES,
  S_LANGUAGE_TEMPLATE,
  S_PFI,
  S_POI,
  S_TAG99,
  SUB_SLOT,
  TOP_SLOT,
} from "./slots.js";
import { isTemplateId, isWellFormed, readTlv } from "./tlv.js";

// Set by readTemplate: the template held a sub-id it has no slot for.
let foreignSub = false;

// Duplicate top-level ids: seen[id] === stamp means "already read in this scan" (no clearing per scan).
const seen = new Int32Array(100);
let stamp = 0;

function set(slot: number, start: number, end: number): void {
  at[2 * slot] = start;
  at[2 * slot + 1] = end;
}

/**
 * Records the known sub-values of a template; false if malformed or a known sub-id repeats.
 * Sets foreignSub when a sub-id without a slot appears.
 */
function readTemplate(s: string, start: number, end: number, kind: number): boolean {
  foreignSub = false;
  let i = start;
  while (i < end) {
    const h = readTlv(s, i, end);
    if (h < 0) return false;
    const sub = (h / 100) | 0;
    const valueEnd = i + 4 + (h - sub * 100);
    const slot = SUB_SLOT[kind * 100 + sub];
    if (slot >= 0) {
      if (at[2 * slot] >= 0) return false;
      set(slot, i + 4, valueEnd);
    } else foreignSub = true;
    i = valueEnd;
  }
  return true;
}

/**
 * Tag 99 holding sub-ids other than 00/01 is someone else's template on a static QR (ABA writes
 * its own data there; EMV leaves 80–99 to any party), so its 00 is not a creation time: keep the
 * raw value only. On a QR that must carry timestamps (PoI 12 or an amount) it stays the KHQR
 * timestamp template, as in the reference SDK, and its other sub-ids are ignored.
 */
function classifyTag99(s: string): void {
  const poi = at[2 * S_POI];
  const dynamic =
    at[2 * S_AMOUNT] >= 0 ||
    (poi >= 0 && at[2 * S_POI + 1] - poi === 2 && s.charCodeAt(poi) === 49 && s.charCodeAt(poi + 1) === 50);
  if (dynamic) {
    at[2 * S_TAG99] = -1;
  } else {
    at[2 * S_CREATED] = -1;
    at[2 * S_EXPIRES] = -1;
  }
}

/** Reads s; returns 0 for a valid KHQR (expiry not checked), else the table's error code. */
export function scan(s: string): number {
  at.fill(-1);
  lastScan.merchantTag = 0;
  lastScan.expiresAt = -1;
  if (typeof s !== "string" || s.length === 0) return E.KHQR_INVALID;
  if (++stamp === 0x7fffffff) {
    seen.fill(0);
    stamp = 1;
  }
  const n = s.length;
  let i = 0;
  let outOfOrder = false;
  let afterCrc = false;
  while (i < n) {
    const h = readTlv(s, i, n);
    if (h < 0) return E.KHQR_INVALID;
    const id = (h / 100) | 0;
    const start = i + 4;
    const end = start + (h - id * 100);
    if (seen[id] === stamp) return E.KHQR_INVALID;
    seen[id] = stamp;
    // EMV: the payload format indicator comes first and the CRC last.
    if ((i === 0 && id !== 0) || afterCrc) outOfOrder = true;
    const slot = TOP_SLOT[id];
    if (slot >= 0) {
      set(slot, start, end);
      if (id === 63) afterCrc = true;
    } else if (id === 29 || id === 30) {
      if (lastScan.merchantTag !== 0) return E.KHQR_INVALID; // both 29 and 30: which account is paid?
      lastScan.merchantTag = id;
      set(S_ACCOUNT, start, end);
      if (!readTemplate(s, start, end, K_ACCOUNT)) return E.KHQR_INVALID;
    } else if (id === 62) {
      if (!readTemplate(s, start, end, K_ADDITIONAL)) return E.KHQR_INVALID;
    } else if (id === 64) {
      set(S_LANGUAGE_TEMPLATE, start, end);
      if (!readTemplate(s, start, end, K_LANGUAGE)) return E.KHQR_INVALID;
    } else if (id === 99) {
      if (!readTemplate(s, start, end, K_TIMESTAMP)) return E.KHQR_INVALID;
      if (foreignSub) set(S_TAG99, start, end);
    } else if (isTemplateId(id) && !isWellFormed(s, start, end)) {
      return E.KHQR_INVALID;
    }
    i = end;
  }
  if (at[2 * S_TAG99] >= 0) classifyTag99(s);
  if (at[2 * S_PFI] < 0) return E.PAYLOAD_FORMAT_REQUIRED;
  if (outOfOrder) return E.TAG_NOT_IN_ORDER;
  const crcAt = at[2 * S_CRC];
  if (crcAt < 0) return E.CRC_REQUIRED;
  if (at[2 * S_CRC + 1] - crcAt !== 4) return E.CRC_LENGTH;
  const carried = readHex4(s, crcAt);
  if (carried < 0 || crc16(s, 0, crcAt) !== carried) return E.KHQR_INVALID;
  return checkFields(s);
}
