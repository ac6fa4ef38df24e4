import type { FieldError } from "../errors.js";
import { canonicalDecimal, compareDecimals, CURRENCY_DECIMALS, moneyText } from "../money/money.js";
import { isQrImageTemplate, QR_IMAGE_TEMPLATES, type QrImageTemplate } from "../upstreams/gateway-templates.js";

/**
 * What the gateway's QR API accepts in a generate-qr request, from its public pages. The service checks these
 * before any call, so a caller hears "firstName must be letters" instead of the gateway's code 16 after a round
 * trip. Every rule names its source (docs/upstreams.md, docs/gateway-simulator.md):
 *
 * - [QR]  ABA PayWay developer suite, "QR API", POST /api/payment-gateway/v1/payments/generate-qr
 *         (https://developer.payway.com.kh/qr-api-14530840e0): its request-body table and its status-code table.
 * - [PUR] ABA PayWay "Purchase API" (https://paywaydr.ababank.com/developers/create-transaction): the same
 *         gateway's older page, whose firstname/lastname/phone rows say more than the QR API page does.
 * - [SBX] Sandbox probes published with a public SDK (Ruzaid-aman/ABA-Payway-SDK-unofficial,
 *         docs/SANDBOX-FINDINGS.md §7a). Measured, not documented: lower confidence.
 */

/** [QR] qr_image_template: one of the gateway's templates (the list and its sources: upstreams/gateway-templates.ts). */
export { isQrImageTemplate, QR_IMAGE_TEMPLATES, type QrImageTemplate } from "../upstreams/gateway-templates.js";
/** A configuration that names none sends this one: the documented template public clients send most. */
export const DEFAULT_QR_IMAGE_TEMPLATE: QrImageTemplate = "template3_color";
export const QR_IMAGE_TEMPLATE_MESSAGE = `must be one of the gateway's QR image templates: ${QR_IMAGE_TEMPLATES.join(", ")}`;

/** [QR] lifetime: required, whole minutes, minimum 3, maximum 43,200 (30 days). */
export const LIFETIME_MIN = 3;
export const LIFETIME_MAX = 43_200;
export const LIFETIME_MESSAGE =
  `must be a whole number of minutes from ${LIFETIME_MIN} to ${LIFETIME_MAX} ` +
  "(the gateway's QR API allows 3 minutes to 30 days)";

/** A text rule: the longest value, a pattern (also the OpenAPI pattern, so contract and code agree), what it says. */
export interface TextRule {
  max: number;
  pattern: RegExp;
  message: string;
}

/** [QR] tran_id: at most 20 characters. [SBX] §7a: letters, digits and '-' only (others refused with HTTP 400). */
export const TRAN_ID: TextRule = {
  max: 20,
  pattern: /^[A-Za-z0-9-]+$/,
  message: "may contain only letters A-Z and a-z, digits and '-' (the gateway's tran_id)",
};

/**
 * [QR] first_name, last_name: at most 20 characters; status 16/17 "must not contain numbers or special
 * characters". [PUR] firstname: "no Special character allowed", example "ប៉ហ៊ួ": any script's letters. So: words of
 * letters (with their combining marks, which Khmer writes vowels with) separated by single spaces.
 */
export const NAME: TextRule = {
  max: 20,
  pattern: /^[\p{L}\p{M}]+(?: [\p{L}\p{M}]+)*$/u,
  message:
    "must be letters (any script) in words separated by single spaces: the gateway refuses digits and " +
    "special characters in names (its codes 16 and 17)",
};

/** [QR] email: at most 50 characters; status 19 "Invalid Email". */
export const EMAIL: TextRule = {
  max: 50,
  pattern: /^[^@\s]+@[^@\s]+\.[^@\s]+$/,
  message: "must be an e-mail address (name@domain.tld; the gateway's code 19)",
};

/** [QR] phone: at most 20 characters; status 18 "Invalid Phone Number". [PUR] phone: 8 to 20 characters. */
export const PHONE: TextRule = {
  max: 20,
  pattern: /^\+?[0-9]{8,20}$/,
  message: "must be 8 to 20 digits, optionally after one '+', without spaces or punctuation (the gateway's code 18)",
};

/** [QR] items: at most 500 characters (base64 of the JSON list); at most 10 items. */
export const ITEMS_MAX = 10;
export const ITEMS_ENCODED_MAX = 500;

export interface WireItem {
  name: string;
  quantity: number;
  price: number;
}

/** items as the gateway receives them: base64 of the UTF-8 JSON list (Khmer names take 4 characters each). */
export function encodeItems(items: readonly WireItem[]): string {
  const list = items.map(({ name, quantity, price }) => ({ name, quantity, price }));
  return Buffer.from(JSON.stringify(list), "utf8").toString("base64");
}

/** Why these items cannot be sent, or null. */
export function itemsProblem(items: readonly WireItem[]): string | null {
  if (items.length > ITEMS_MAX) return `must have at most ${ITEMS_MAX} items (the gateway's limit)`;
  const encoded = encodeItems(items).length;
  return encoded > ITEMS_ENCODED_MAX
    ? `are too long for the gateway: ${encoded} characters encoded, at most ${ITEMS_ENCODED_MAX} (base64 of the ` +
        "JSON list; a Khmer letter takes 4)"
    : null;
}

/** [QR] amount: at least 100 KHR (status 47) or 0.01 USD. */
export const MIN_AMOUNT: Record<"USD" | "KHR", string> = { USD: "0.01", KHR: "100" };

/**
 * The amount as it travels, in the body and in the hash alike: the currency's decimals (money.ts), KHR in whole
 * riels ("4000"), USD with two decimals ("10.50"). Null when `amount` (exact decimal text) does not fit its currency
 * or is below its MIN_AMOUNT.
 */
export function wireAmount(amount: string, currency: "USD" | "KHR"): string | null {
  const exact = /^\d{1,13}(?:\.\d{1,2})?$/.test(amount) ? canonicalDecimal(amount) : null;
  if (exact === null || (CURRENCY_DECIMALS[currency] === 0 && exact.includes("."))) return null;
  return compareDecimals(exact, MIN_AMOUNT[currency]) < 0 ? null : moneyText(exact, currency);
}

/** A text rule's problem with an optional value, or null. */
export function textProblem(rule: TextRule, value: string | undefined): string | null {
  if (value === undefined) return null;
  if (value.length > rule.max) return `must be at most ${rule.max} characters`;
  return rule.pattern.test(value) ? null : rule.message;
}

/** Each field of a generate request that breaks a rule above (field names as the client's request names them). */
export function generateProblems(req: {
  tranId: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  phone?: string;
  items?: readonly WireItem[];
  lifetimeMinutes: number;
  qrImageTemplate: string;
}): FieldError[] {
  const out: FieldError[] = [];
  const text: [string, TextRule, string | undefined][] = [
    ["tranId", TRAN_ID, req.tranId],
    ["firstName", NAME, req.firstName],
    ["lastName", NAME, req.lastName],
    ["email", EMAIL, req.email],
    ["phone", PHONE, req.phone],
  ];
  for (const [field, rule, value] of text) {
    const problem = field === "tranId" && !value ? "is required" : textProblem(rule, value);
    if (problem) out.push({ field, message: problem });
  }
  const items = req.items?.length ? itemsProblem(req.items) : null;
  if (items) out.push({ field: "items", message: items });
  const life = req.lifetimeMinutes;
  if (!Number.isInteger(life) || life < LIFETIME_MIN || life > LIFETIME_MAX)
    out.push({ field: "lifetimeMinutes", message: LIFETIME_MESSAGE });
  if (!isQrImageTemplate(req.qrImageTemplate))
    out.push({ field: "qrImageTemplate", message: QR_IMAGE_TEMPLATE_MESSAGE });
  return out;
}
