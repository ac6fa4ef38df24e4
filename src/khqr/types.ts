/** ISO 4217 numeric: 116 = KHR, 840 = USD. */
export type KhqrCurrency = 116 | 840;

/**
 * What encodeKhqr turns into a QR. Optional strings that are empty ("") count as absent, as in the
 * reference SDK. merchantId is used only for "merchant" (tag 30 sub 01), accountInformation only
 * for "individual" (tag 29 sub 01); acquiringBank (sub 02) is required for a merchant, optional
 * for an individual.
 */
export interface KhqrInput {
  accountType: "individual" | "merchant";
  bakongAccountId: string;
  merchantName: string;
  merchantCity: string;
  merchantId?: string;
  acquiringBank?: string;
  accountInformation?: string;
  merchantCategoryCode?: string;
  currency: KhqrCurrency;
  /** Exact decimal string ("1.50", "10000"); absent → static QR (PoI 11), present → dynamic (PoI 12). */
  amount?: string;
  billNumber?: string;
  mobileNumber?: string;
  storeLabel?: string;
  terminalLabel?: string;
  purposeOfTransaction?: string;
  alternateLanguage?: { languagePreference: string; merchantName: string; merchantCity?: string };
  /** Milliseconds since the epoch (13 digits); both are required with an amount. */
  creationTimestamp?: number;
  expirationTimestamp?: number;
}

/**
 * Decoded QR data. The contract's fields (merchantType … crc) are always present: a string when
 * the QR carries the value, null when it does not (e.g. merchantID of an individual QR, the amount
 * of a static QR, or anything past the point where a broken QR stopped being readable). The
 * other fields are present only when the QR carries them, and are omitted otherwise.
 * Values are the QR's text as is (amount "1.50", timestamps in ms as digits).
 */
export interface KhqrDecoded {
  /** "29" individual, "30" merchant. */
  merchantType: string | null;
  /** Tag 29/30 sub 00 (the SDK calls it bakongAccountID). */
  bankAccountID: string | null;
  /** Tag 30 sub 01. */
  merchantID: string | null;
  /** Tag 29/30 sub 02. */
  acquiringBank: string | null;
  merchantCategoryCode: string | null;
  transactionCurrency: string | null;
  transactionAmount: string | null;
  countryCode: string | null;
  merchantName: string | null;
  merchantCity: string | null;
  crc: string | null;
  /** Tag 01: "11" static, "12" dynamic. */
  pointOfInitiationMethod?: string;
  /** Tag 29 sub 01. */
  accountInformation?: string;
  billNumber?: string;
  mobileNumber?: string;
  storeLabel?: string;
  terminalLabel?: string;
  purposeOfTransaction?: string;
  languagePreference?: string;
  merchantNameAlternateLanguage?: string;
  merchantCityAlternateLanguage?: string;
  creationTimestamp?: string;
  expirationTimestamp?: string;
  /**
   * Tag 99's raw value when it is not KHQR timestamps: another party's template on a static QR
   * (ABA's static QRs carry their own data there). Its sub 00 is then not a creation time.
   */
  tag99?: string;
}

export interface KhqrDecodeResult {
  status: { code: number; errorCode: number | null; message: string | null };
  data: KhqrDecoded;
}

/** One broken rule of an input; errorCode is the reference SDK's number for it. */
export interface KhqrFieldError {
  field: string;
  message: string;
  errorCode: number;
}
