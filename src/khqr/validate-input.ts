// The rules encodeKhqr applies to its input, as a list of field errors. Inputs may come from
// untyped JSON, so every value is type-checked before use and nothing here throws.

import { formatKhqrAmount } from "./amount.js";
import { E, khqrErrorMessage } from "./errors.js";
import { isAccountIdForm, isDigits, LANGUAGE_PREFERENCE_LENGTH, MAX, TIMESTAMP_DIGITS } from "./rules.js";
import type { KhqrFieldError, KhqrInput } from "./types.js";

type Errors = KhqrFieldError[];

function add(out: Errors, field: string, errorCode: number, message = khqrErrorMessage(errorCode)): void {
  out.push({ field, message, errorCode });
}

/** "" and null count as absent, as in the reference SDK. */
function isAbsent(v: unknown): v is undefined | null | "" {
  return v === undefined || v === null || v === "";
}

/**
 * Checks a text value; returns it when it is a string within max (absent → undefined).
 * requiredCode is used when a required value is absent (or of the wrong type), lengthCode when
 * it is too long (or, for an optional value, of the wrong type).
 */
function text(
  out: Errors,
  field: string,
  v: unknown,
  max: number,
  lengthCode: number,
  requiredCode = 0,
): string | undefined {
  if (isAbsent(v)) {
    if (requiredCode !== 0) add(out, field, requiredCode);
    return undefined;
  }
  if (typeof v !== "string") {
    add(out, field, requiredCode || lengthCode, `${field} must be a string`);
    return undefined;
  }
  if (v.length > max) {
    add(out, field, lengthCode);
    return undefined;
  }
  return v;
}

/** Size of a template value made of the given sub-values (4 characters of header each). */
function templateSize(...values: (string | undefined)[]): number {
  let n = 0;
  for (const v of values) if (v !== undefined) n += 4 + v.length;
  return n;
}

/** Every broken rule of the input, in field order; empty when encodeKhqr would accept it. */
export function validateKhqrInput(input: Partial<KhqrInput>): KhqrFieldError[] {
  const out: Errors = [];
  const x: Partial<KhqrInput> = typeof input === "object" && input !== null ? input : {};
  checkAccount(out, x);
  text(out, "merchantName", x.merchantName, MAX.MERCHANT_NAME, E.MERCHANT_NAME_LENGTH, E.MERCHANT_NAME_REQUIRED);
  text(out, "merchantCity", x.merchantCity, MAX.MERCHANT_CITY, E.MERCHANT_CITY_LENGTH, E.MERCHANT_CITY_REQUIRED);
  checkCategoryCode(out, x.merchantCategoryCode);
  const hasAmount = checkCurrencyAndAmount(out, x);
  checkAdditionalData(out, x);
  checkAlternateLanguage(out, x.alternateLanguage);
  checkTimestamps(out, x, hasAmount);
  return out;
}

function checkAccount(out: Errors, x: Partial<KhqrInput>): void {
  const type = x.accountType;
  if (type !== "individual" && type !== "merchant") add(out, "accountType", E.MERCHANT_TYPE_REQUIRED);
  const id = text(
    out,
    "bakongAccountId",
    x.bakongAccountId,
    MAX.ACCOUNT_ID,
    E.ACCOUNT_ID_LENGTH,
    E.ACCOUNT_ID_REQUIRED,
  );
  if (id !== undefined && !isAccountIdForm(id, 0, id.length)) add(out, "bakongAccountId", E.ACCOUNT_ID_INVALID);
  let sub01: string | undefined;
  let bank: string | undefined;
  if (type === "merchant") {
    sub01 = text(out, "merchantId", x.merchantId, MAX.MERCHANT_ID, E.MERCHANT_ID_LENGTH, E.MERCHANT_ID_REQUIRED);
    bank = text(
      out,
      "acquiringBank",
      x.acquiringBank,
      MAX.ACQUIRING_BANK,
      E.ACQUIRING_BANK_LENGTH,
      E.ACQUIRING_BANK_REQUIRED,
    );
  } else {
    sub01 = text(
      out,
      "accountInformation",
      x.accountInformation,
      MAX.ACCOUNT_INFORMATION,
      E.ACCOUNT_INFORMATION_LENGTH,
    );
    bank = text(out, "acquiringBank", x.acquiringBank, MAX.ACQUIRING_BANK, E.ACQUIRING_BANK_LENGTH);
  }
  // Each part may fit while tag 29/30 as a whole does not (3 × (4 + 32) > 99).
  if (id !== undefined && templateSize(id, sub01, bank) > MAX.TEMPLATE) {
    add(
      out,
      "merchantAccountInformation",
      E.KHQR_INVALID,
      "Account id, merchant id/account information and acquiring bank exceed 99 characters together (tag 29/30)",
    );
  }
}

function checkCategoryCode(out: Errors, mcc: unknown): void {
  if (isAbsent(mcc)) return; // default 5999
  if (typeof mcc !== "string") add(out, "merchantCategoryCode", E.MCC_INVALID);
  else if (mcc.length > 4) add(out, "merchantCategoryCode", E.MCC_LENGTH);
  else if (mcc.length !== 4 || !isDigits(mcc, 0, 4)) add(out, "merchantCategoryCode", E.MCC_INVALID);
}

/** Returns whether an amount was given (valid or not), which makes the timestamps required. */
function checkCurrencyAndAmount(out: Errors, x: Partial<KhqrInput>): boolean {
  const currency = x.currency;
  const currencyOk = currency === 116 || currency === 840;
  if (currency === undefined || currency === null) add(out, "currency", E.CURRENCY_REQUIRED);
  else if (!currencyOk) add(out, "currency", E.UNSUPPORTED_CURRENCY);
  const amount: unknown = x.amount;
  if (isAbsent(amount)) return false;
  if (typeof amount !== "string") add(out, "amount", E.AMOUNT_INVALID, "amount must be a decimal string");
  else if (currencyOk && formatKhqrAmount(amount, currency) === null) add(out, "amount", E.AMOUNT_INVALID);
  return true;
}

function checkAdditionalData(out: Errors, x: Partial<KhqrInput>): void {
  const parts = [
    text(out, "billNumber", x.billNumber, MAX.BILL_NUMBER, E.BILL_NUMBER_LENGTH),
    text(out, "mobileNumber", x.mobileNumber, MAX.MOBILE_NUMBER, E.MOBILE_NUMBER_LENGTH),
    text(out, "storeLabel", x.storeLabel, MAX.STORE_LABEL, E.STORE_LABEL_LENGTH),
    text(out, "terminalLabel", x.terminalLabel, MAX.TERMINAL_LABEL, E.TERMINAL_LABEL_LENGTH),
    text(out, "purposeOfTransaction", x.purposeOfTransaction, MAX.PURPOSE_OF_TRANSACTION, E.PURPOSE_LENGTH),
  ];
  // Five values of up to 25 fit one by one but not together (5 × 29 > 99).
  if (templateSize(...parts) > MAX.TEMPLATE) {
    add(
      out,
      "additionalData",
      E.KHQR_INVALID,
      "Bill number, mobile number, store label, terminal label and purpose exceed 99 characters together (tag 62)",
    );
  }
}

function checkAlternateLanguage(out: Errors, lang: unknown): void {
  if (lang === undefined || lang === null) return;
  if (typeof lang !== "object") {
    add(out, "alternateLanguage", E.LANGUAGE_PREFERENCE_REQUIRED, "alternateLanguage must be an object");
    return;
  }
  const l = lang as Record<string, unknown>;
  const pref = text(
    out,
    "alternateLanguage.languagePreference",
    l.languagePreference,
    LANGUAGE_PREFERENCE_LENGTH,
    E.LANGUAGE_PREFERENCE_LENGTH,
    E.LANGUAGE_PREFERENCE_REQUIRED,
  );
  if (pref !== undefined && pref.length !== LANGUAGE_PREFERENCE_LENGTH)
    add(out, "alternateLanguage.languagePreference", E.LANGUAGE_PREFERENCE_LENGTH);
  text(out, "alternateLanguage.merchantName", l.merchantName, MAX.NAME_ALT, E.NAME_ALT_LENGTH, E.NAME_ALT_REQUIRED);
  text(out, "alternateLanguage.merchantCity", l.merchantCity, MAX.CITY_ALT, E.CITY_ALT_LENGTH);
}

function isTimestamp(v: unknown): v is number {
  return (
    typeof v === "number" && Number.isSafeInteger(v) && v >= 10 ** (TIMESTAMP_DIGITS - 1) && v < 10 ** TIMESTAMP_DIGITS
  );
}

/** A 13-digit ms timestamp, or undefined (absent or reported as broken). */
function timestamp(
  out: Errors,
  field: string,
  v: unknown,
  required: boolean,
  requiredMessage?: string,
  badMessage?: string,
): number | undefined {
  if (v === undefined || v === null) {
    if (required) add(out, field, E.EXPIRATION_REQUIRED, requiredMessage);
    return undefined;
  }
  if (!isTimestamp(v)) {
    add(out, field, E.EXPIRATION_LENGTH, badMessage);
    return undefined;
  }
  return v;
}

// The SDK reads the clock for the creation time; this codec has no clock, so the caller passes
// it, and it gets the expiration's codes (45 required, 49 malformed) with its own messages.
function checkTimestamps(out: Errors, x: Partial<KhqrInput>, hasAmount: boolean): void {
  const created = timestamp(
    out,
    "creationTimestamp",
    x.creationTimestamp,
    hasAmount,
    "Creation timestamp is required for dynamic KHQR",
    "Creation timestamp must be a 13-digit integer (ms)",
  );
  const expires = timestamp(out, "expirationTimestamp", x.expirationTimestamp, hasAmount);
  if (created !== undefined && expires !== undefined && expires < created)
    add(out, "expirationTimestamp", E.EXPIRATION_IN_THE_PAST);
}
