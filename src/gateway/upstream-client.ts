import { AppError, type FieldError } from "../errors.js";
import { createUpstreamClient, upstreamFaults, type UpstreamName } from "../upstreams/http-client.js";
import { checkTransactionHash, generateQrHash, type GenerateQrHashInput } from "../upstreams/gateway-hash.js";
import { encodeItems, generateProblems, wireAmount } from "./gateway-rules.js";

/**
 * Client of the card/QR gateway's QR API: generate-qr and check-transaction-2, both JSON POSTs
 * signed with HMAC-SHA512 under the merchant's API key (see upstream-hash.ts). The gateway's
 * answers are read by hand; anything we cannot read is UPSTREAM_UNAVAILABLE, a refusal by the
 * gateway is UPSTREAM_REJECTED carrying its status {code, message}.
 */

export interface GatewayCredentials {
  merchantId: string;
  apiKey: string;
}

export interface GatewayItem {
  name: string;
  quantity: number;
  price: number;
}

export interface GatewayGenerateRequest {
  tranId: string;
  /** Exact decimal text, e.g. "10.50". */
  amount: string;
  currency: "USD" | "KHR";
  firstName?: string;
  lastName?: string;
  email?: string;
  phone?: string;
  items?: GatewayItem[];
  /** 3 to 43,200 (gateway-rules.ts). */
  lifetimeMinutes: number;
  /** Required by the QR API: one of its templates (gateway-rules.ts; the configuration's by default). */
  qrImageTemplate: string;
  callbackUrl?: string;
}

export interface GatewayStatus {
  code: string;
  message: string;
}

export interface GatewayGenerateResult {
  qrString: string;
  qrImage: string | null;
  deeplink: string;
  appStore: string;
  playStore: string;
  amount: number;
  currency: string;
  status: GatewayStatus;
}

export const GATEWAY_PAYMENT_STATUSES = [
  "APPROVED",
  "PRE-AUTH",
  "PENDING",
  "DECLINED",
  "REFUNDED",
  "CANCELLED",
] as const;
export type GatewayPaymentStatus = (typeof GATEWAY_PAYMENT_STATUSES)[number] | "NOT_FOUND";

export interface GatewayCheckResult {
  paymentStatus: GatewayPaymentStatus;
  statusCode: string;
  message: string;
  raw: Record<string, unknown>;
}

export interface GatewayClient {
  generateQr(cred: GatewayCredentials, req: GatewayGenerateRequest): Promise<GatewayGenerateResult>;
  checkTransaction(cred: GatewayCredentials, tranId: string): Promise<GatewayCheckResult>;
  /** The transaction-detail call: any age (check-transaction-2 sees 7 days), limited to 10/min per merchant. */
  transactionDetail(cred: GatewayCredentials, tranId: string): Promise<GatewayCheckResult>;
  /** The proxy in use (credentials removed), or null. */
  proxy: string | null;
  close(): Promise<void>;
}

export interface GatewayClientOptions {
  baseUrl: string;
  timeoutMs: number;
  clock?: () => Date;
  /** GATEWAY_API_PROXY: every call goes through this proxy; direct by default. */
  proxy?: string | null;
}

const GENERATE_PATH = "/api/payment-gateway/v1/payments/generate-qr";
const CHECK_PATH = "/api/payment-gateway/v1/payments/check-transaction-2";
const DETAIL_PATH = "/api/payment-gateway/v1/payments/transaction-detail";
/** generate-qr status 6: the calling domain (or outbound address) is not whitelisted for the merchant. */
const DOMAIN_NOT_WHITELISTED = "6";
/** check-transaction-2: "00" success, "6" tran_id not (yet) known; "11"/"429" are transient. */
const CHECK_NOT_FOUND = "6";
const CHECK_TRANSIENT = new Set(["11", "429"]);
/** payment_status_code → payment_status, for answers that carry only the number. */
const STATUS_BY_CODE: Record<number, GatewayPaymentStatus> = {
  0: "APPROVED",
  2: "PENDING",
  3: "DECLINED",
  4: "REFUNDED",
  7: "CANCELLED",
};

const GATEWAY: UpstreamName = { upstream: "gateway", label: "gateway API" };
const { fault, statusFault } = upstreamFaults(GATEWAY);

export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const clock = options.clock ?? (() => new Date());
  const http = createUpstreamClient({
    ...GATEWAY,
    baseUrl: options.baseUrl,
    timeoutMs: options.timeoutMs,
    proxy: options.proxy ?? null,
    // As Node's fetch called it before this client: HTTP/1.1, User-Agent "node" (some firewalls refuse calls without one).
    http2: false,
    userAgent: "node",
  });
  const send = async (path: string, body: Record<string, unknown>) => readJson(await http.postJson(path, body));

  return {
    async generateQr(cred, req) {
      const fields = generateFields(cred, req, formatReqTime(clock()));
      // The amount travels as the very text it is hashed with ("10.50", "4000"); lifetime is the page's integer.
      const body: Record<string, unknown> = { ...fields, lifetime: req.lifetimeMinutes };
      body.hash = generateQrHash(cred.apiKey, fields);
      const answer = await send(GENERATE_PATH, body);
      const status = gatewayStatus(GENERATE_PATH, answer);
      // The QR API documents "0"; "00" is the gateway's success code elsewhere, never a refusal.
      if (status.code === DOMAIN_NOT_WHITELISTED) {
        throw new AppError(
          "UPSTREAM_REJECTED",
          `gateway refused generate-qr: domain not whitelisted (code 6, "${status.message}"). Fix: ask the gateway ` +
            `to whitelist this service's domain and outbound IP address for merchant ${cred.merchantId} ` +
            "(with GATEWAY_API_PROXY, the proxy's address)",
          [],
          { upstream: "gateway", gatewayStatus: status },
        );
      }
      if (status.code !== "0" && status.code !== "00") {
        throw new AppError(
          "UPSTREAM_REJECTED",
          `gateway refused generate-qr: ${status.message} (code ${status.code})`,
          [],
          {
            upstream: "gateway",
            gatewayStatus: status,
          },
        );
      }
      return readGenerated(answer, status);
    },

    checkTransaction: (cred, tranId) => check(CHECK_PATH, cred, tranId),
    transactionDetail: (cred, tranId) => check(DETAIL_PATH, cred, tranId),
    proxy: http.proxy,
    close: () => http.close(),
  };

  /** check-transaction-2 and transaction-detail: the same request (and hash) and answer. */
  async function check(path: string, cred: GatewayCredentials, tranId: string): Promise<GatewayCheckResult> {
    assertValid(checkTranId(tranId));
    const fields = { req_time: formatReqTime(clock()), merchant_id: cred.merchantId, tran_id: tranId };
    const answer = await send(path, { ...fields, hash: checkTransactionHash(cred.apiKey, fields) });
    const status = rateLimited(path, answer) ?? gatewayStatus(path, answer);
    const raw = answer.body as Record<string, unknown>;
    if (status.code === "00" || status.code === "0") {
      return { paymentStatus: readPaymentStatus(answer), statusCode: status.code, message: status.message, raw };
    }
    if (status.code === CHECK_NOT_FOUND)
      return { paymentStatus: "NOT_FOUND", statusCode: status.code, message: status.message, raw };
    if (CHECK_TRANSIENT.has(status.code)) {
      throw fault(path, `gateway busy: ${status.message} (code ${status.code})`, "UPSTREAM_ERROR", {
        gatewayStatus: status,
        ...(status.code === "429" ? { rateLimited: true } : {}),
      });
    }
    throw new AppError("UPSTREAM_REJECTED", `gateway refused ${path}: ${status.message} (code ${status.code})`, [], {
      upstream: "gateway",
      gatewayStatus: status,
    });
  }
}

/** HTTP 429 (too many attempts): a fault marked `rateLimited`, the caller backs off the whole merchant. */
function rateLimited(path: string, answer: Answer): null {
  if (answer.httpStatus === 429)
    throw fault(path, "HTTP 429 (too many attempts)", "HTTP_STATUS", { httpStatus: 429, rateLimited: true });
  return null;
}

/** UTC YYYYMMDDHHmmss. */
export function formatReqTime(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, "").slice(0, 14);
}

// --- Requests -----------------------------------------------------------------------------

/**
 * The request's fields as they travel and are hashed. Everything the QR API's pages forbid is refused here, before
 * any call (gateway-rules.ts names each rule's source): the gateway would refuse it after a round trip.
 */
function generateFields(
  cred: GatewayCredentials,
  req: GatewayGenerateRequest,
  reqTime: string,
): GenerateQrHashInput & { amount: string } {
  const details = generateProblems(req);
  const amount = req.currency === "USD" || req.currency === "KHR" ? wireAmount(req.amount, req.currency) : null;
  if (req.currency !== "USD" && req.currency !== "KHR")
    details.push({ field: "currency", message: "must be USD or KHR" });
  else if (amount === null) details.push({ field: "amount", message: AMOUNT_RULE[req.currency] });
  for (const [i, item] of (req.items ?? []).entries()) {
    const ok = typeof item.name === "string" && Number.isFinite(item.quantity) && Number.isFinite(item.price);
    if (!ok) details.push({ field: `items[${i}]`, message: "needs name (string), quantity and price (numbers)" });
  }
  assertValid(details);

  const fields: GenerateQrHashInput & { amount: string } = {
    req_time: reqTime,
    merchant_id: cred.merchantId,
    tran_id: req.tranId,
    amount: amount as string,
    items: req.items?.length ? encodeItems(req.items) : undefined,
    first_name: req.firstName || undefined,
    last_name: req.lastName || undefined,
    email: req.email || undefined,
    phone: req.phone || undefined,
    purchase_type: "purchase",
    payment_option: "abapay_khqr",
    callback_url: req.callbackUrl ? base64(req.callbackUrl) : undefined,
    currency: req.currency,
    lifetime: String(req.lifetimeMinutes),
    qr_image_template: req.qrImageTemplate,
  };
  for (const key of Object.keys(fields) as (keyof typeof fields)[]) if (fields[key] === undefined) delete fields[key];
  return fields;
}

/** [QR] amount: KHR whole and at least 100 (status 47), USD at least 0.01 with at most two decimals. */
const AMOUNT_RULE = {
  KHR: "must be whole riels, at least 100 KHR (the gateway's minimum)",
  USD: "must be at least 0.01 USD with at most 2 decimals",
};

/** check-transaction: any id the gateway may have issued (orders made before the stricter generate rule included). */
function checkTranId(tranId: string): FieldError[] {
  return typeof tranId === "string" && tranId.length >= 1 && tranId.length <= 20
    ? []
    : [{ field: "tranId", message: "must be 1 to 20 characters" }];
}

function assertValid(details: FieldError[]): void {
  if (details.length > 0) throw new AppError("BAD_USER_INPUT", "invalid gateway request", details);
}

function base64(text: string): string {
  return Buffer.from(text, "utf8").toString("base64");
}

// --- HTTP ---------------------------------------------------------------------------------

interface Answer {
  httpStatus: number;
  /** The parsed JSON, or undefined when the body is not JSON. */
  body: unknown;
}

/** The answer's JSON, or undefined when it is not JSON (read as a fault where a status was expected). */
function readJson(answer: { status: number; text: string }): Answer {
  try {
    return { httpStatus: answer.status, body: JSON.parse(answer.text) as unknown };
  } catch {
    return { httpStatus: answer.status, body: undefined };
  }
}

// --- Answers ------------------------------------------------------------------------------

/** Every answer, success or refusal (the gateway refuses with 200, 400 or 403), carries `status`. */
function gatewayStatus(path: string, answer: Answer): GatewayStatus {
  if (answer.httpStatus >= 500) throw statusFault(path, answer.httpStatus);
  const status = isRecord(answer.body) ? answer.body.status : undefined;
  const code =
    isRecord(status) && (typeof status.code === "string" || Number.isInteger(status.code)) ? String(status.code) : null;
  if (code === null || !isRecord(status) || (status.message !== undefined && typeof status.message !== "string")) {
    const what = answer.body === undefined ? "the answer is not JSON" : "the answer has no status {code, message}";
    throw fault(path, `${what} (HTTP ${answer.httpStatus})`, "BAD_RESPONSE", { httpStatus: answer.httpStatus });
  }
  return { code, message: typeof status.message === "string" ? status.message : "" };
}

function readGenerated(answer: Answer, status: GatewayStatus): GatewayGenerateResult {
  const b = answer.body as Record<string, unknown>;
  const texts = [b.qrString, b.abapay_deeplink, b.app_store, b.play_store, b.currency];
  const image = b.qrImage;
  const imageOk =
    image === undefined ||
    image === null ||
    image === "" ||
    (typeof image === "string" && image.startsWith("data:image/"));
  if (
    answer.httpStatus !== 200 ||
    !texts.every((t) => typeof t === "string") ||
    b.qrString === "" ||
    typeof b.amount !== "number" ||
    !imageOk
  ) {
    throw fault(
      GENERATE_PATH,
      "a successful answer without qrString/qrImage/abapay_deeplink/app_store/play_store/amount/currency",
      "BAD_RESPONSE",
    );
  }
  return {
    qrString: b.qrString as string,
    qrImage: typeof image === "string" && image !== "" ? image : null,
    deeplink: b.abapay_deeplink as string,
    appStore: b.app_store as string,
    playStore: b.play_store as string,
    amount: b.amount,
    currency: b.currency as string,
    status,
  };
}

function readPaymentStatus(answer: Answer): GatewayPaymentStatus {
  const data = (answer.body as Record<string, unknown>).data;
  if (answer.httpStatus === 200 && isRecord(data)) {
    const named = typeof data.payment_status === "string" ? data.payment_status.toUpperCase() : undefined;
    if (named && (GATEWAY_PAYMENT_STATUSES as readonly string[]).includes(named)) return named as GatewayPaymentStatus;
    if (
      named === undefined &&
      typeof data.payment_status_code === "number" &&
      STATUS_BY_CODE[data.payment_status_code]
    ) {
      return STATUS_BY_CODE[data.payment_status_code];
    }
  }
  throw fault(CHECK_PATH, "a successful answer without a known data.payment_status", "BAD_RESPONSE");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
