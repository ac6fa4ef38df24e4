import { E, khqrErrorMessage } from "./errors.js";
import { scan } from "./scan.js";
import * as r from "./slots.js";
import type { KhqrDecoded, KhqrDecodeResult } from "./types.js";

function text(s: string, slot: number): string | null {
  const start = r.at[2 * slot];
  return start < 0 ? null : s.slice(start, r.at[2 * slot + 1]);
}

/**
 * Reads a KHQR string. Never throws. A valid QR answers status {code: 0, errorCode: null,
 * message: null}; anything else answers code 1 with the reference SDK's errorCode and message for
 * the first broken rule (KHQR_INVALID for unreadable text or a wrong CRC), and `data` holds what
 * was read before the reader stopped. Expiry is not judged here (no clock): see verifyKhqr.
 */
export function decodeKhqr(qr: string): KhqrDecodeResult {
  let code: number;
  try {
    code = scan(qr);
  } catch {
    code = E.KHQR_INVALID; // defensive: the boundary may be handed anything by untyped callers
  }
  const s = typeof qr === "string" ? qr : "";
  return {
    status:
      code === 0
        ? { code: 0, errorCode: null, message: null }
        : { code: 1, errorCode: code, message: khqrErrorMessage(code) },
    data: readData(s),
  };
}

function readData(s: string): KhqrDecoded {
  const tag = r.lastScan.merchantTag;
  const data: KhqrDecoded = {
    merchantType: tag === 29 ? "29" : tag === 30 ? "30" : null,
    bankAccountID: text(s, r.S_ACCOUNT_ID),
    merchantID: tag === 30 ? text(s, r.S_SUB01) : null,
    acquiringBank: text(s, r.S_ACQUIRING_BANK),
    merchantCategoryCode: text(s, r.S_MCC),
    transactionCurrency: text(s, r.S_CURRENCY),
    transactionAmount: text(s, r.S_AMOUNT),
    countryCode: text(s, r.S_COUNTRY),
    merchantName: text(s, r.S_NAME),
    merchantCity: text(s, r.S_CITY),
    crc: text(s, r.S_CRC),
  };
  let v = text(s, r.S_POI);
  if (v !== null) data.pointOfInitiationMethod = v;
  if (tag === 29 && (v = text(s, r.S_SUB01)) !== null) data.accountInformation = v;
  if ((v = text(s, r.S_BILL)) !== null) data.billNumber = v;
  if ((v = text(s, r.S_MOBILE)) !== null) data.mobileNumber = v;
  if ((v = text(s, r.S_STORE)) !== null) data.storeLabel = v;
  if ((v = text(s, r.S_TERMINAL)) !== null) data.terminalLabel = v;
  if ((v = text(s, r.S_PURPOSE)) !== null) data.purposeOfTransaction = v;
  if ((v = text(s, r.S_LANGUAGE)) !== null) data.languagePreference = v;
  if ((v = text(s, r.S_NAME_ALT)) !== null) data.merchantNameAlternateLanguage = v;
  if ((v = text(s, r.S_CITY_ALT)) !== null) data.merchantCityAlternateLanguage = v;
  if ((v = text(s, r.S_CREATED)) !== null) data.creationTimestamp = v;
  if ((v = text(s, r.S_EXPIRES)) !== null) data.expirationTimestamp = v;
  if ((v = text(s, r.S_TAG99)) !== null) data.tag99 = v;
  return data;
}
