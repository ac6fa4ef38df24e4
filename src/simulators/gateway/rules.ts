import {
  CHECK_TRANSACTION_HASH_ORDER,
  GENERATE_QR_HASH_ORDER,
  checkTransactionHash,
  generateQrHash,
  hashesEqual,
} from "../../upstreams/gateway-hash.js";
import { isQrImageTemplate } from "../../upstreams/gateway-templates.js";

/**
 * The gateway's request rules as the simulator enforces them: which status code a request earns and with which
 * HTTP status. Codes and messages are the gateway's published ones. Each rule is written from the public pages
 * (not from the service's client, which must meet them) and listed with its source in docs/gateway-simulator.md:
 * [QR] the "QR API" page (https://developer.payway.com.kh/qr-api-14530840e0), [PUR] the older "Purchase API" page,
 * [SBX] a public SDK's sandbox probes (Ruzaid-aman/ABA-Payway-SDK-unofficial docs/SANDBOX-FINDINGS.md).
 */

export interface Refusal {
  http: number;
  code: string;
  message: string;
}

export interface GenerateOrder {
  merchantId: string;
  tranId: string;
  /** Decimal text of the amount as the gateway reads it. */
  amount: string;
  currency: "USD" | "KHR";
  lifetimeMinutes: number;
  callbackUrl: string | null;
  qrImageTemplate: string;
}

/** [QR] lifetime: required, minutes, 3 to 43,200 (30 days). */
export const MAX_LIFETIME_MINUTES = 43_200;
const MIN_LIFETIME_MINUTES = 3;
/** [QR] tran_id ≤ 20; [SBX] §7a: only letters, digits and '-'. */
const TRAN_ID = /^[A-Za-z0-9-]{1,20}$/;
/** [QR] first_name/last_name ≤ 20, codes 16/17 "must not contain numbers or special characters"; [PUR] Khmer shown. */
const NAME = /^[\p{L}\p{M}]+(?: [\p{L}\p{M}]+)*$/u;
/** [QR] phone ≤ 20, code 18; [PUR] phone 8 to 20 characters. Digits, one leading '+' at most. */
const PHONE = /^\+?[0-9]{8,20}$/;

const WRONG_HASH: Refusal = { http: 403, code: "1", message: "Wrong Hash." };
const BAD_PARAMS: Refusal = {
  http: 400,
  code: "48",
  message: "Something went wrong with requested parameters. Please try again or contact the merchant for help.",
};

/** A request value as the gateway concatenates it into the hash: absent → "", number → its text. */
export function hashText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

export function verifyGenerateHash(body: Record<string, unknown>, apiKey: string): Refusal | null {
  const fields = Object.fromEntries(GENERATE_QR_HASH_ORDER.map((name) => [name, hashText(body[name])]));
  const ok = typeof body.hash === "string" && hashesEqual(generateQrHash(apiKey, fields), body.hash);
  return ok ? null : WRONG_HASH;
}

export function verifyCheckHash(body: Record<string, unknown>, apiKey: string): Refusal | null {
  const [reqTime, merchantId, tranId] = CHECK_TRANSACTION_HASH_ORDER.map((name) => hashText(body[name]));
  const expected = checkTransactionHash(apiKey, { req_time: reqTime, merchant_id: merchantId, tran_id: tranId });
  return typeof body.hash === "string" && hashesEqual(expected, body.hash) ? null : WRONG_HASH;
}

/** An optional field left out: absent, null (as in the page's example) or "" (hashed as "" all the same). */
const absent = (v: unknown) => v === undefined || v === null || v === "";

/** Everything after the signature: parameters, customer fields, currency, option, amount. */
export function checkGenerateRequest(body: Record<string, unknown>): GenerateOrder | Refusal {
  const amount = amountText(body.amount);
  const lifetime = wholeNumber(body.lifetime);
  const paramsOk =
    /^\d{14}$/.test(hashText(body.req_time)) &&
    typeof body.tran_id === "string" &&
    TRAN_ID.test(body.tran_id) &&
    amount !== null &&
    typeof body.payment_option === "string" &&
    typeof body.currency === "string" &&
    lifetime !== null &&
    lifetime >= MIN_LIFETIME_MINUTES &&
    lifetime <= MAX_LIFETIME_MINUTES &&
    isQrImageTemplate(hashText(body.qr_image_template)) &&
    (absent(body.purchase_type) || ["purchase", "pre-auth"].includes(hashText(body.purchase_type))) &&
    (absent(body.items) || itemsOk(body.items)) &&
    (absent(body.callback_url) || decodedUrl(body.callback_url) !== null);
  if (!paramsOk) return BAD_PARAMS;

  const customer = customerRefusal(body);
  if (customer) return customer;

  const currency = (body.currency as string).toUpperCase();
  if (currency !== "USD" && currency !== "KHR")
    return { http: 400, code: "12", message: "Payment currency is not allowed." };
  if (body.payment_option !== "abapay_khqr") {
    return ["wechat", "alipay"].includes(body.payment_option as string)
      ? { http: 400, code: "23", message: "Selected Payment Option is not enabled for this Merchant Profile." }
      : BAD_PARAMS;
  }
  const value = Number(amount);
  if (currency === "KHR" && value < 100)
    return { http: 400, code: "47", message: "KHR Amount must be greater than 100 KHR." };
  if (currency === "USD" && value < 0.01) return BAD_PARAMS;

  return {
    merchantId: body.merchant_id as string,
    tranId: body.tran_id as string,
    amount: amount as string,
    currency,
    lifetimeMinutes: lifetime as number,
    callbackUrl: absent(body.callback_url) ? null : decodedUrl(body.callback_url),
    qrImageTemplate: body.qr_image_template as string,
  };
}

const isName = (v: unknown) => typeof v === "string" && v.length <= 20 && NAME.test(v);

function customerRefusal(body: Record<string, unknown>): Refusal | null {
  if (!absent(body.first_name) && !isName(body.first_name)) {
    return {
      http: 400,
      code: "16",
      message: "Invalid First Name. It must not contain numbers or special characters or not more than 100 characters.",
    };
  }
  if (!absent(body.last_name) && !isName(body.last_name)) {
    return {
      http: 400,
      code: "17",
      message: "Invalid Last Name. It must not contain numbers or special characters or not more than 100 characters.",
    };
  }
  if (!absent(body.phone) && !(typeof body.phone === "string" && PHONE.test(body.phone))) {
    return { http: 400, code: "18", message: "Invalid Phone Number." };
  }
  const email = hashText(body.email);
  // [QR] email ≤ 50, code 19.
  if (!absent(body.email) && (email.length > 50 || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email))) {
    return { http: 400, code: "19", message: "Invalid Email." };
  }
  return null;
}

/** JSON number (or numeric text) → the decimal text the gateway works with. */
function amountText(value: unknown): string | null {
  if (typeof value === "number" && Number.isFinite(value) && value > 0 && !/e/i.test(String(value)))
    return String(value);
  if (typeof value === "string" && /^\d+(\.\d+)?$/.test(value) && Number(value) > 0) return String(Number(value));
  return null;
}

function wholeNumber(value: unknown): number | null {
  const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
  return typeof n === "number" && Number.isInteger(n) ? n : null;
}

/** [QR] items: base64 of a JSON array of at most 10 {name, quantity, price}, at most 500 characters. */
function itemsOk(value: unknown): boolean {
  if (typeof value !== "string" || value.length > 500) return false;
  try {
    const items: unknown = JSON.parse(Buffer.from(value, "base64").toString("utf8"));
    return (
      Array.isArray(items) &&
      items.length <= 10 &&
      items.every(
        (it) =>
          typeof it === "object" &&
          it !== null &&
          typeof it.name === "string" &&
          isNumeric(it.quantity) &&
          isNumeric(it.price),
      )
    );
  } catch {
    return false;
  }
}

function isNumeric(value: unknown): boolean {
  return (
    (typeof value === "number" && Number.isFinite(value)) || (typeof value === "string" && /^\d+(\.\d+)?$/.test(value))
  );
}

function decodedUrl(value: unknown): string | null {
  if (typeof value !== "string" || value.length === 0) return null;
  const text = Buffer.from(value, "base64").toString("utf8");
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? text : null;
  } catch {
    return null;
  }
}
