import {
  CHECK_TRANSACTION_HASH_ORDER,
  GENERATE_QR_HASH_ORDER,
  checkTransactionHash,
  generateQrHash,
  hashesEqual,
} from "../../upstreams/gateway-hash.js";

/**
 * The gateway's request rules as the simulator enforces them: which status code a request earns
 * and with which HTTP status. Codes and messages are the gateway's published ones.
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
}

export const QR_TEMPLATES = [
  "template1",
  "template1_color",
  "template2",
  "template2_color",
  "template3_color",
  "template4",
  "template4_color",
  "template5",
  "template5_color",
  "template6_color",
];

export const MAX_LIFETIME_MINUTES = 172_800;
const MIN_LIFETIME_MINUTES = 3;

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

/** Everything after the signature: parameters, customer fields, currency, option, amount. */
export function checkGenerateRequest(body: Record<string, unknown>): GenerateOrder | Refusal {
  const amount = amountText(body.amount);
  const lifetime = wholeNumber(body.lifetime);
  const paramsOk =
    /^\d{14}$/.test(hashText(body.req_time)) &&
    isText(body.tran_id, 20) &&
    amount !== null &&
    typeof body.payment_option === "string" &&
    lifetime !== null &&
    lifetime >= MIN_LIFETIME_MINUTES &&
    lifetime <= MAX_LIFETIME_MINUTES &&
    (body.qr_image_template === undefined || QR_TEMPLATES.includes(hashText(body.qr_image_template))) &&
    (body.purchase_type === undefined || ["purchase", "pre-auth"].includes(hashText(body.purchase_type))) &&
    (body.items === undefined || itemsOk(body.items)) &&
    (body.callback_url === undefined || decodedUrl(body.callback_url) !== null);
  if (!paramsOk) return BAD_PARAMS;

  const customer = customerRefusal(body);
  if (customer) return customer;

  const currency = typeof body.currency === "string" ? body.currency.toUpperCase() : "";
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
    callbackUrl: body.callback_url === undefined ? null : decodedUrl(body.callback_url),
  };
}

function customerRefusal(body: Record<string, unknown>): Refusal | null {
  const name = /^[\p{L}\p{M} .'-]{1,20}$/u;
  if (body.first_name !== undefined && !name.test(hashText(body.first_name))) {
    return {
      http: 400,
      code: "16",
      message: "Invalid First Name. It must not contain numbers or special characters or not more than 100 characters.",
    };
  }
  if (body.last_name !== undefined && !name.test(hashText(body.last_name))) {
    return {
      http: 400,
      code: "17",
      message: "Invalid Last Name. It must not contain numbers or special characters or not more than 100 characters.",
    };
  }
  if (body.phone !== undefined && !/^\+?[0-9 ]{6,20}$/.test(hashText(body.phone))) {
    return { http: 400, code: "18", message: "Invalid Phone Number." };
  }
  const email = hashText(body.email);
  if (body.email !== undefined && (email.length > 50 || !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email))) {
    return { http: 400, code: "19", message: "Invalid Email." };
  }
  return null;
}

function isText(value: unknown, max: number): value is string {
  return typeof value === "string" && value.length >= 1 && value.length <= max;
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

/** items: base64 of a JSON array of at most 10 {name, quantity, price}, at most 500 characters. */
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
