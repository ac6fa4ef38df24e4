// The numbered error table of the national reference SDK (bakong-khqr 1.0.20,
// src/constant/errorCode.js). Numbers and messages are copied verbatim, typos included, so
// integrators who know the SDK recognise them; only the key of code 15 is spelled correctly here.

export const KHQR_ERRORS = {
  BAKONG_ACCOUNT_ID_REQUIRED: { code: 1, message: "Bakong Account ID cannot be null or empty" },
  MERCHANT_NAME_REQUIRED: { code: 2, message: "Merchant name cannot be null or empty" },
  BAKONG_ACCOUNT_ID_INVALID: { code: 3, message: "Bakong Account ID is invalid" },
  TRANSACTION_AMOUNT_INVALID: { code: 4, message: "Amount is invalid" },
  MERCHANT_TYPE_REQUIRED: { code: 5, message: "Merchant type cannot be null or empty" },
  BAKONG_ACCOUNT_ID_LENGTH_INVALID: { code: 6, message: "Bakong Account ID Length is Invalid" },
  MERCHANT_NAME_LENGTH_INVALID: { code: 7, message: "Merchant Name Length is invalid" },
  KHQR_INVALID: { code: 8, message: "KHQR provided is invalid" },
  CURRENCY_TYPE_REQUIRED: { code: 9, message: "Currency type cannot be null or empty" },
  BILL_NUMBER_LENGTH_INVALID: { code: 10, message: "Bill Name Length is invalid" },
  STORE_LABEL_LENGTH_INVALID: { code: 11, message: "Store Label Length is invalid" },
  TERMINAL_LABEL_LENGTH_INVALID: { code: 12, message: "Terminal Label Length is invalid" },
  CONNECTION_TIMEOUT: { code: 13, message: "Cannot reach Bakong Open API service. Please check internet connection" },
  INVALID_DEEP_LINK_SOURCE_INFO: { code: 14, message: "Source Info for Deep Link is invalid" },
  INTERNAL_SERVER: { code: 15, message: "Internal server error" },
  PAYLOAD_FORMAT_INDICATOR_LENGTH_INVALID: { code: 16, message: "Payload Format indicator Length is invalid" },
  POINT_INITIATION_LENGTH_INVALID: { code: 17, message: "Point of initiation Length is invalid" },
  MERCHANT_CODE_LENGTH_INVALID: { code: 18, message: "Merchant code Length is invalid" },
  TRANSACTION_CURRENCY_LENGTH_INVALID: { code: 19, message: "Transaction currency Length is invalid" },
  COUNTRY_CODE_LENGTH_INVALID: { code: 20, message: "Country code Length is invalid" },
  MERCHANT_CITY_LENGTH_INVALID: { code: 21, message: "Merchant city Length is invalid" },
  CRC_LENGTH_INVALID: { code: 22, message: "CRC Length is invalid" },
  PAYLOAD_FORMAT_INDICATOR_TAG_REQUIRED: { code: 23, message: "Payload format indicator tag required" },
  CRC_TAG_REQUIRED: { code: 24, message: "CRC tag required" },
  MERCHANT_CATEGORY_TAG_REQUIRED: { code: 25, message: "Merchant category tag required" },
  COUNTRY_CODE_TAG_REQUIRED: { code: 26, message: "Country Code cannot be null or empty" },
  MERCHANT_CITY_TAG_REQUIRED: { code: 27, message: "Merchant City cannot be null or empty" },
  UNSUPPORTED_CURRENCY: { code: 28, message: "Unsupported currency" },
  INVALID_DEEP_LINK_URL: { code: 29, message: "Deep Link URL is not valid" },
  MERCHANT_ID_REQUIRED: { code: 30, message: "Merchant ID cannot be null or empty" },
  ACQUIRING_BANK_REQUIRED: { code: 31, message: "Acquiring Bank cannot be null or empty" },
  MERCHANT_ID_LENGTH_INVALID: { code: 32, message: "Merchant ID Length is invalid" },
  ACQUIRING_BANK_LENGTH_INVALID: { code: 33, message: "Acquiring Bank Length is invalid" },
  MOBILE_NUMBER_LENGTH_INVALID: { code: 34, message: "Mobile Number Length is invalid" },
  ACCOUNT_INFORMATION_LENGTH_INVALID: { code: 35, message: "Account Information Length is invalid" },
  TAG_NOT_IN_ORDER: { code: 36, message: "Tag is not in order" },
  LANGUAGE_PREFERENCE_REQUIRED: { code: 37, message: "Language Preference cannot be null or empty" },
  LANGUAGE_PREFERENCE_LENGTH_INVALID: { code: 38, message: "Language Preference Length is invalid" },
  MERCHANT_NAME_ALTERNATE_LANGUAGE_REQUIRED: {
    code: 39,
    message: "Merchant Name Alternate Language cannot be null or empty",
  },
  MERCHANT_NAME_ALTERNATE_LANGUAGE_LENGTH_INVALID: {
    code: 40,
    message: "Merchant Name Alternate Language Length is invalid",
  },
  MERCHANT_CITY_ALTERNATE_LANGUAGE_LENGTH_INVALID: {
    code: 41,
    message: "Merchant City Alternate Language Length is invalid",
  },
  PURPOSE_OF_TRANSACTION_LENGTH_INVALID: { code: 42, message: "Purpose of Transaction Length is invalid" },
  UPI_ACCOUNT_INFORMATION_LENGTH_INVALID: { code: 43, message: "Upi Account Information Length is invalid" },
  UPI_ACCOUNT_INFORMATION_INVALID_CURRENCY: { code: 44, message: "Upi Account Information Length does not accept USD" },
  EXPIRATION_TIMESTAMP_REQUIRED: { code: 45, message: "Expiration timestamp is required for dynamic KHQR" },
  KHQR_EXPIRED: { code: 46, message: "This dynamic KHQR has expired" },
  INVALID_DYNAMIC_KHQR: { code: 47, message: "This dynamic KHQR has invalid field transaction amount" },
  POINT_OF_INITIATION_METHOD_INVALID: { code: 48, message: "Point of Initiation Method is invalid" },
  EXPIRATION_TIMESTAMP_LENGTH_INVALID: { code: 49, message: "Expiration timestamp length is invalid" },
  EXPIRATION_TIMESTAMP_IN_THE_PAST: { code: 50, message: "Expiration timestamp is in the past" },
  INVALID_MERCHANT_CATEGORY_CODE: { code: 51, message: "Invalid merchant category code" },
} as const;

export type KhqrErrorName = keyof typeof KHQR_ERRORS;

// Plain numeric constants for the codes the codec itself produces, so hot paths compare small
// integers instead of walking the table.
export const E = {
  ACCOUNT_ID_REQUIRED: 1,
  MERCHANT_NAME_REQUIRED: 2,
  ACCOUNT_ID_INVALID: 3,
  AMOUNT_INVALID: 4,
  MERCHANT_TYPE_REQUIRED: 5,
  ACCOUNT_ID_LENGTH: 6,
  MERCHANT_NAME_LENGTH: 7,
  KHQR_INVALID: 8,
  CURRENCY_REQUIRED: 9,
  BILL_NUMBER_LENGTH: 10,
  STORE_LABEL_LENGTH: 11,
  TERMINAL_LABEL_LENGTH: 12,
  PAYLOAD_FORMAT_LENGTH: 16,
  POI_LENGTH: 17,
  MCC_LENGTH: 18,
  CURRENCY_LENGTH: 19,
  COUNTRY_LENGTH: 20,
  MERCHANT_CITY_LENGTH: 21,
  CRC_LENGTH: 22,
  PAYLOAD_FORMAT_REQUIRED: 23,
  CRC_REQUIRED: 24,
  MCC_REQUIRED: 25,
  COUNTRY_REQUIRED: 26,
  MERCHANT_CITY_REQUIRED: 27,
  UNSUPPORTED_CURRENCY: 28,
  MERCHANT_ID_REQUIRED: 30,
  ACQUIRING_BANK_REQUIRED: 31,
  MERCHANT_ID_LENGTH: 32,
  ACQUIRING_BANK_LENGTH: 33,
  MOBILE_NUMBER_LENGTH: 34,
  ACCOUNT_INFORMATION_LENGTH: 35,
  TAG_NOT_IN_ORDER: 36,
  LANGUAGE_PREFERENCE_REQUIRED: 37,
  LANGUAGE_PREFERENCE_LENGTH: 38,
  NAME_ALT_REQUIRED: 39,
  NAME_ALT_LENGTH: 40,
  CITY_ALT_LENGTH: 41,
  PURPOSE_LENGTH: 42,
  EXPIRATION_REQUIRED: 45,
  EXPIRED: 46,
  INVALID_DYNAMIC: 47,
  POI_INVALID: 48,
  EXPIRATION_LENGTH: 49,
  EXPIRATION_IN_THE_PAST: 50,
  MCC_INVALID: 51,
} as const;

const MESSAGES: string[] = [];
for (const { code, message } of Object.values(KHQR_ERRORS)) MESSAGES[code] = message;

/** The SDK's message for an error code ("KHQR provided is invalid" for unknown codes). */
export function khqrErrorMessage(code: number): string {
  return MESSAGES[code] ?? KHQR_ERRORS.KHQR_INVALID.message;
}

/** Thrown by encodeKhqr on invalid input; `field` names the offending KhqrInput property. */
export class KhqrError extends Error {
  readonly errorCode: number;
  readonly field: string | undefined;

  constructor(errorCode: number, message: string = khqrErrorMessage(errorCode), field?: string) {
    super(message);
    this.name = "KhqrError";
    this.errorCode = errorCode;
    this.field = field;
  }
}
