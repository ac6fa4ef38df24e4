// The KHQR field rules, applied to the slots the reader filled (see slots.ts).

import { E } from "./errors.js";
import {
  isAccountIdForm,
  isAmount,
  isDigits,
  isSupportedCurrency,
  LANGUAGE_PREFERENCE_LENGTH,
  MAX,
  MAX_FRACTION_DIGITS,
  TIMESTAMP_DIGITS,
} from "./rules.js";
import {
  at,
  has,
  lastScan,
  len,
  S_ACCOUNT_ID,
  S_ACQUIRING_BANK,
  S_AMOUNT,
  S_BILL,
  S_CITY,
  S_CITY_ALT,
  S_COUNTRY,
  S_CREATED,
  S_CURRENCY,
  S_EXPIRES,
  S_LANGUAGE,
  S_LANGUAGE_TEMPLATE,
  S_MCC,
  S_MOBILE,
  S_NAME,
  S_NAME_ALT,
  S_PFI,
  S_POI,
  S_PURPOSE,
  S_STORE,
  S_SUB01,
  S_TERMINAL,
} from "./slots.js";

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

/**
 * The field rules, on the slots of a string whose structure and CRC are sound: 0 when all hold,
 * else the code of the first broken one. Rule order follows tag order, so the first broken rule
 * reported is the first a reader meets. Timestamps are checked for form, not against a clock.
 */
export function checkFields(s: string): number {
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
  // On read, a merchant's id and acquiring bank are optional (as in the reference SDK's verify;
  // payment is routed by the account id). When present they follow the encoder's rules.
  if (tag === 30) {
    if (has(S_SUB01)) e = required(S_SUB01, MAX.MERCHANT_ID, E.MERCHANT_ID_REQUIRED, E.MERCHANT_ID_LENGTH);
    if (e !== 0) return e;
  } else if (badOptional(S_SUB01, MAX.ACCOUNT_INFORMATION)) return E.ACCOUNT_INFORMATION_LENGTH;
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

/**
 * Value of a 13-digit ms timestamp slot, or -1 when it is not 13 digits. Parsed as two small
 * integers (7 + 6 digits) so the loop stays in small-integer arithmetic.
 */
function timestampValue(s: string, slot: number): number {
  const p = at[2 * slot];
  if (at[2 * slot + 1] - p !== TIMESTAMP_DIGITS) return -1;
  let hi = 0;
  let lo = 0;
  for (let i = p; i < p + 7; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    hi = hi * 10 + d;
  }
  for (let i = p + 7; i < p + TIMESTAMP_DIGITS; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    lo = lo * 10 + d;
  }
  return hi * 1_000_000 + lo;
}

function checkTimestamps(s: string, expirationRequired: boolean): number {
  let expires = -1;
  if (!has(S_EXPIRES)) {
    if (expirationRequired) return E.EXPIRATION_REQUIRED;
  } else if ((expires = timestampValue(s, S_EXPIRES)) < 0) return E.EXPIRATION_LENGTH;
  lastScan.expiresAt = expires;
  if (!has(S_CREATED)) return 0;
  const created = timestampValue(s, S_CREATED);
  if (created < 0) return E.KHQR_INVALID;
  return expires >= 0 && expires < created ? E.EXPIRATION_IN_THE_PAST : 0;
}
