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

/** The slot of each top-level tag id, -1 for none. */
export const TOP_SLOT = new Int8Array(100).fill(-1);
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
export const K_ACCOUNT = 0;
export const K_ADDITIONAL = 1;
export const K_LANGUAGE = 2;
export const K_TIMESTAMP = 3;
export const SUB_SLOT = new Int8Array(400).fill(-1);
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
