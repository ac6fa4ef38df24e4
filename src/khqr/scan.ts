// The validating reader shared by decode and verify. One pass over the string records where each
// known value starts and ends (offsets in a reused Int32Array, no substrings), then the CRC and
// the field rules are checked on those offsets. The result is an error code (0 = valid KHQR,
// timestamps not compared with any clock). The offsets stay readable until the next scan, which
// is safe because scanning is synchronous and single-threaded.

import { crc16, readHex4 } from "./crc.js";
import { E } from "./errors.js";
import {
  digitsValue,
  isAccountIdForm,
  isAmount,
  isDigits,
  isSupportedCurrency,
  LANGUAGE_PREFERENCE_LENGTH,
  MAX,
  MAX_FRACTION_DIGITS,
  TIMESTAMP_DIGITS,
} from "./rules.js";
import { isTemplateId, isWellFormed, readTlv } from "./tlv.js";

// Value slots.
export const S_PFI = 0;
export const S_POI = 1;
export const S_ACCOUNT = 2; // the whole tag 29/30 template
export const S_ACCOUNT_ID = 3;
export const S_SUB01 = 4; // tag 29: account information; tag 30: merchant id
export const S_ACQUIRING_BANK = 5;
export const S_MCC = 6;
export const S_CURRENCY = 7;
export const S_AMOUNT = 8;
export const S_COUNTRY = 9;
export const S_NAME = 10;
export const S_CITY = 11;
export const S_BILL = 12;
export const S_MOBILE = 13;
export const S_STORE = 14;
export const S_TERMINAL = 15;
export const S_PURPOSE = 16;
export const S_LANGUAGE_TEMPLATE = 17;
export const S_LANGUAGE = 18;
export const S_NAME_ALT = 19;
export const S_CITY_ALT = 20;
export const S_CREATED = 21;
export const S_EXPIRES = 22;
export const S_CRC = 23;
const SLOTS = 24;

/** at[2k] = start, at[2k+1] = end of slot k in the last scanned string; start -1 = absent. */
export const at = new Int32Array(SLOTS * 2);
/** Tag of the merchant account template of the last scan: 29, 30, or 0 when none was read. */
export const lastScan = { merchantTag: 0 };

const TOP_SLOT = new Int8Array(100).fill(-1);
TOP_SLOT[0] = S_PFI;
TOP_SLOT[1] = S_POI;
TOP_SLOT[52] = S_MCC;
TOP_SLOT[53] = S_CURRENCY;
TOP_SLOT[54] = S_AMOUNT;
TOP_SLOT[58] = S_COUNTRY;
TOP_SLOT[59] = S_NAME;
TOP_SLOT[60] = S_CITY;
TOP_SLOT[63] = S_CRC;

// Sub-tag slots of the templates we read, indexed kind * 100 + sub id.
const K_ACCOUNT = 0;
const K_ADDITIONAL = 1;
const K_LANGUAGE = 2;
const K_TIMESTAMP = 3;
const SUB_SLOT = new Int8Array(400).fill(-1);
SUB_SLOT[K_ACCOUNT * 100 + 0] = S_ACCOUNT_ID;
SUB_SLOT[K_ACCOUNT * 100 + 1] = S_SUB01;
SUB_SLOT[K_ACCOUNT * 100 + 2] = S_ACQUIRING_BANK;
SUB_SLOT[K_ADDITIONAL * 100 + 1] = S_BILL;
SUB_SLOT[K_ADDITIONAL * 100 + 2] = S_MOBILE;
SUB_SLOT[K_ADDITIONAL * 100 + 3] = S_STORE;
SUB_SLOT[K_ADDITIONAL * 100 + 7] = S_TERMINAL;
SUB_SLOT[K_ADDITIONAL * 100 + 8] = S_PURPOSE;
SUB_SLOT[K_LANGUAGE * 100 + 0] = S_LANGUAGE;
SUB_SLOT[K_LANGUAGE * 100 + 1] = S_NAME_ALT;
SUB_SLOT[K_LANGUAGE * 100 + 2] = S_CITY_ALT;
SUB_SLOT[K_TIMESTAMP * 100 + 0] = S_CREATED;
SUB_SLOT[K_TIMESTAMP * 100 + 1] = S_EXPIRES;

// Duplicate top-level ids: seen[id] === stamp means "already read in this scan" (no clearing per scan).
const seen = new Int32Array(100);
let stamp = 0;

function set(slot: number, start: number, end: number): void {
  at[2 * slot] = start;
  at[2 * slot + 1] = end;
}

/** Records the known sub-values of a template; false if malformed or a known sub-id repeats. */
function readTemplate(s: string, start: number, end: number, kind: number): boolean {
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
    }
    i = valueEnd;
  }
  return true;
}

/** Reads s; returns 0 for a valid KHQR (expiry not checked), else the table's error code. */
export function scan(s: string): number {
  at.fill(-1);
  lastScan.merchantTag = 0;
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
    } else if (isTemplateId(id) && !isWellFormed(s, start, end)) {
      return E.KHQR_INVALID;
    }
    i = end;
  }
  if (at[2 * S_PFI] < 0) return E.PAYLOAD_FORMAT_REQUIRED;
  if (outOfOrder) return E.TAG_NOT_IN_ORDER;
  const crcAt = at[2 * S_CRC];
  if (crcAt < 0) return E.CRC_REQUIRED;
  if (at[2 * S_CRC + 1] - crcAt !== 4) return E.CRC_LENGTH;
  const carried = readHex4(s, crcAt);
  if (carried < 0 || crc16(s, 0, crcAt) !== carried) return E.KHQR_INVALID;
  return checkFields(s);
}

function has(slot: number): boolean {
  return at[2 * slot] >= 0;
}

function len(slot: number): number {
  return at[2 * slot + 1] - at[2 * slot];
}

/** Two-character value equal to the char codes a, b. */
function is2(s: string, slot: number, a: number, b: number): boolean {
  const p = at[2 * slot];
  return len(slot) === 2 && s.charCodeAt(p) === a && s.charCodeAt(p + 1) === b;
}

/** Present and longer than max, or present and empty: the "length invalid" codes of optional values. */
function badOptional(slot: number, max: number): boolean {
  return has(slot) && (len(slot) === 0 || len(slot) > max);
}

/** Required value: 0 if fine, else requiredCode when absent/empty, lengthCode when over max. */
function required(slot: number, max: number, requiredCode: number, lengthCode: number): number {
  if (!has(slot) || len(slot) === 0) return requiredCode;
  return len(slot) > max ? lengthCode : 0;
}

// Rule order follows tag order, so the first broken rule reported is the first a reader meets.
function checkFields(s: string): number {
  let e = required(S_PFI, 2, E.PAYLOAD_FORMAT_REQUIRED, E.PAYLOAD_FORMAT_LENGTH);
  if (e !== 0) return e;
  if (!is2(s, S_PFI, 48, 49)) return E.KHQR_INVALID; // "01"
  if (!has(S_POI)) return E.POI_INVALID;
  if (len(S_POI) > 2) return E.POI_LENGTH;
  const dynamic = is2(s, S_POI, 49, 50); // "12"
  if (!dynamic && !is2(s, S_POI, 49, 49)) return E.POI_INVALID;
  e = checkAccount(s);
  if (e !== 0) return e;
  e = required(S_MCC, 4, E.MCC_REQUIRED, E.MCC_LENGTH);
  if (e !== 0) return e;
  if (len(S_MCC) !== 4 || !isDigits(s, at[2 * S_MCC], at[2 * S_MCC + 1])) return E.MCC_INVALID;
  e = required(S_CURRENCY, 3, E.CURRENCY_REQUIRED, E.CURRENCY_LENGTH);
  if (e !== 0) return e;
  if (!isSupportedCurrency(s, at[2 * S_CURRENCY], at[2 * S_CURRENCY + 1])) return E.UNSUPPORTED_CURRENCY;
  const hasAmount = has(S_AMOUNT);
  if (hasAmount && !isAmount(s, at[2 * S_AMOUNT], at[2 * S_AMOUNT + 1], MAX_FRACTION_DIGITS)) return E.AMOUNT_INVALID;
  if (dynamic && !hasAmount) return E.INVALID_DYNAMIC;
  e = required(S_COUNTRY, 3, E.COUNTRY_REQUIRED, E.COUNTRY_LENGTH);
  if (e !== 0) return e;
  if (!is2(s, S_COUNTRY, 75, 72)) return E.KHQR_INVALID; // "KH"
  e = required(S_NAME, MAX.MERCHANT_NAME, E.MERCHANT_NAME_REQUIRED, E.MERCHANT_NAME_LENGTH);
  if (e !== 0) return e;
  e = required(S_CITY, MAX.MERCHANT_CITY, E.MERCHANT_CITY_REQUIRED, E.MERCHANT_CITY_LENGTH);
  if (e !== 0) return e;
  e = checkAdditionalData();
  if (e !== 0) return e;
  e = checkLanguageTemplate();
  if (e !== 0) return e;
  return checkTimestamps(s, dynamic || hasAmount);
}

function checkAccount(s: string): number {
  const tag = lastScan.merchantTag;
  if (tag === 0) return E.MERCHANT_TYPE_REQUIRED;
  let e = required(S_ACCOUNT_ID, MAX.ACCOUNT_ID, E.ACCOUNT_ID_REQUIRED, E.ACCOUNT_ID_LENGTH);
  if (e !== 0) return e;
  if (!isAccountIdForm(s, at[2 * S_ACCOUNT_ID], at[2 * S_ACCOUNT_ID + 1])) return E.ACCOUNT_ID_INVALID;
  if (tag === 30) {
    e = required(S_SUB01, MAX.MERCHANT_ID, E.MERCHANT_ID_REQUIRED, E.MERCHANT_ID_LENGTH);
    if (e !== 0) return e;
    return required(S_ACQUIRING_BANK, MAX.ACQUIRING_BANK, E.ACQUIRING_BANK_REQUIRED, E.ACQUIRING_BANK_LENGTH);
  }
  if (badOptional(S_SUB01, MAX.ACCOUNT_INFORMATION)) return E.ACCOUNT_INFORMATION_LENGTH;
  if (has(S_ACQUIRING_BANK)) {
    return required(S_ACQUIRING_BANK, MAX.ACQUIRING_BANK, E.ACQUIRING_BANK_REQUIRED, E.ACQUIRING_BANK_LENGTH);
  }
  return 0;
}

function checkAdditionalData(): number {
  if (badOptional(S_BILL, MAX.BILL_NUMBER)) return E.BILL_NUMBER_LENGTH;
  if (badOptional(S_MOBILE, MAX.MOBILE_NUMBER)) return E.MOBILE_NUMBER_LENGTH;
  if (badOptional(S_STORE, MAX.STORE_LABEL)) return E.STORE_LABEL_LENGTH;
  if (badOptional(S_TERMINAL, MAX.TERMINAL_LABEL)) return E.TERMINAL_LABEL_LENGTH;
  if (badOptional(S_PURPOSE, MAX.PURPOSE_OF_TRANSACTION)) return E.PURPOSE_LENGTH;
  return 0;
}

function checkLanguageTemplate(): number {
  if (!has(S_LANGUAGE_TEMPLATE)) return 0;
  if (!has(S_LANGUAGE) || len(S_LANGUAGE) === 0) return E.LANGUAGE_PREFERENCE_REQUIRED;
  if (len(S_LANGUAGE) !== LANGUAGE_PREFERENCE_LENGTH) return E.LANGUAGE_PREFERENCE_LENGTH;
  const e = required(S_NAME_ALT, MAX.NAME_ALT, E.NAME_ALT_REQUIRED, E.NAME_ALT_LENGTH);
  if (e !== 0) return e;
  return badOptional(S_CITY_ALT, MAX.CITY_ALT) ? E.CITY_ALT_LENGTH : 0;
}

function isTimestamp(s: string, slot: number): boolean {
  return len(slot) === TIMESTAMP_DIGITS && isDigits(s, at[2 * slot], at[2 * slot + 1]);
}

function checkTimestamps(s: string, expirationRequired: boolean): number {
  const hasExpiry = has(S_EXPIRES);
  if (!hasExpiry) {
    if (expirationRequired) return E.EXPIRATION_REQUIRED;
  } else if (!isTimestamp(s, S_EXPIRES)) return E.EXPIRATION_LENGTH;
  if (!has(S_CREATED)) return 0;
  if (!isTimestamp(s, S_CREATED)) return E.KHQR_INVALID;
  if (hasExpiry && expiresAt(s) < digitsValue(s, at[2 * S_CREATED], at[2 * S_CREATED + 1])) {
    return E.EXPIRATION_IN_THE_PAST;
  }
  return 0;
}

/** Expiration of the last scanned string in ms, or -1 when it carries none (call after a valid scan). */
export function expiresAt(s: string): number {
  const p = at[2 * S_EXPIRES];
  return p < 0 ? -1 : digitsValue(s, p, at[2 * S_EXPIRES + 1]);
}
