import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Request signatures of the gateway's QR API: base64(HMAC-SHA512(key = merchant API key,
 * message = the field values concatenated in a fixed order)). The order is the gateway's, not
 * the order of the JSON body; an absent field takes part as the empty string.
 */
export const GENERATE_QR_HASH_ORDER = [
  "req_time",
  "merchant_id",
  "tran_id",
  "amount",
  "items",
  "first_name",
  "last_name",
  "email",
  "phone",
  "purchase_type",
  "payment_option",
  "callback_url",
  "return_deeplink",
  "currency",
  "custom_fields",
  "return_params",
  "payout",
  "lifetime",
  "qr_image_template",
] as const;

export const CHECK_TRANSACTION_HASH_ORDER = ["req_time", "merchant_id", "tran_id"] as const;

export type GenerateQrHashField = (typeof GENERATE_QR_HASH_ORDER)[number];
export type CheckTransactionHashField = (typeof CHECK_TRANSACTION_HASH_ORDER)[number];

/** Every value exactly as it travels in the request, already turned into text. */
export type GenerateQrHashInput = Partial<Record<GenerateQrHashField, string>>;
export type CheckTransactionHashInput = Record<CheckTransactionHashField, string>;

function sign(apiKey: string, message: string): string {
  return createHmac("sha512", apiKey).update(message, "utf8").digest("base64");
}

export function generateQrHash(apiKey: string, fields: GenerateQrHashInput): string {
  return sign(apiKey, GENERATE_QR_HASH_ORDER.map((name) => fields[name] ?? "").join(""));
}

export function checkTransactionHash(apiKey: string, fields: CheckTransactionHashInput): string {
  return sign(apiKey, CHECK_TRANSACTION_HASH_ORDER.map((name) => fields[name]).join(""));
}

/** Constant-time comparison of two base64 signatures (the simulator verifies with it). */
export function hashesEqual(expected: string, received: string): boolean {
  const a = Buffer.from(expected, "utf8");
  const b = Buffer.from(received, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}
