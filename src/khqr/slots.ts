// Where the last scan found each value: offsets into the scanned string, held in one reused
// Int32Array so reading allocates nothing. Valid until the next scan, which is safe because
// scanning is synchronous and single-threaded.

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
/** The whole tag 99 value when it is read as another party's template, not KHQR timestamps. */
export const S_TAG99 = 24;
export const SLOTS = 25;

/** at[2k] = start, at[2k+1] = end of slot k in the last scanned string; start -1 = absent. */
export const at = new Int32Array(SLOTS * 2);
/**
 * Of the last scan: the tag of the merchant account template (29, 30, or 0 when none was read)
 * and, after a valid scan, the expiration in ms (-1 when the QR carries none).
 */
export const lastScan = { merchantTag: 0, expiresAt: -1 };

export function has(slot: number): boolean {
  return at[2 * slot] >= 0;
}

export function len(slot: number): number {
  return at[2 * slot + 1] - at[2 * slot];
}
