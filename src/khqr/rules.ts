// Field rules shared by the input validator (encode) and the QR reader (decode/verify), written
// over s[start, end) so the reader can apply them without cutting substrings.
// Maximum lengths are the reference SDK's (emv.INVALID_LENGTH), in UTF-16 code units.

export const MAX = {
  ACCOUNT_ID: 32,
  MERCHANT_ID: 32,
  ACQUIRING_BANK: 32,
  ACCOUNT_INFORMATION: 32,
  MERCHANT_NAME: 25,
  MERCHANT_CITY: 15,
  AMOUNT: 13,
  BILL_NUMBER: 25,
  MOBILE_NUMBER: 25,
  STORE_LABEL: 25,
  TERMINAL_LABEL: 25,
  PURPOSE_OF_TRANSACTION: 25,
  NAME_ALT: 25,
  CITY_ALT: 15,
  /** A template's value, like any value, must fit a two-digit length. */
  TEMPLATE: 99,
} as const;

/** Language preference is an ISO 639 two-letter code. */
export const LANGUAGE_PREFERENCE_LENGTH = 2;
/** Timestamps are milliseconds since the epoch, 13 digits (2001 to 2286). */
export const TIMESTAMP_DIGITS = 13;
/** Precision the reader accepts for both currencies (ISO 4217 exponent of USD and KHR is 2). */
export const MAX_FRACTION_DIGITS = 2;

/** "name@bank": exactly one '@' with something on both sides. */
export function isAccountIdForm(s: string, start: number, end: number): boolean {
  let at = -1;
  for (let i = start; i < end; i++) {
    if (s.charCodeAt(i) === 64) {
      if (at >= 0) return false;
      at = i;
    }
  }
  return at > start && at < end - 1;
}

export function isDigits(s: string, start: number, end: number): boolean {
  if (start >= end) return false;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** True for exactly "116" or "840". */
export function isSupportedCurrency(s: string, start: number, end: number): boolean {
  if (end - start !== 3) return false;
  const a = s.charCodeAt(start);
  const b = s.charCodeAt(start + 1);
  const c = s.charCodeAt(start + 2);
  return (a === 49 && b === 49 && c === 54) || (a === 56 && b === 52 && c === 48);
}

/**
 * A positive decimal: digits, optionally '.' and 1..maxFraction digits, at most 13 characters
 * (EMV tag 54). No sign, exponent, spaces or grouping.
 */
export function isAmount(s: string, start: number, end: number, maxFraction: number): boolean {
  if (end - start > MAX.AMOUNT || start >= end) return false;
  let dot = -1;
  let nonZero = false;
  for (let i = start; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (dot >= 0) return false;
      dot = i;
    } else if (c >= 48 && c <= 57) {
      if (c !== 48) nonZero = true;
    } else return false;
  }
  if (dot < 0) return nonZero;
  const fraction = end - dot - 1;
  return nonZero && dot > start && fraction >= 1 && fraction <= maxFraction;
}
