import { randomInt, randomUUID } from "node:crypto";
import express, { type NextFunction, type Request, type Response } from "express";
import QRCode, { type QRCodeToDataURLOptions, type QRCodeToDataURLOptionsOther } from "qrcode";
import type { FieldError } from "../../errors.js";
import {
  bodyRecord,
  controlBodyErrors,
  optionalString,
  requireOneOf,
  requireString,
  sendControlError,
  sleep,
  faultControl,
} from "../http.js";
import { checkGenerateRequest, verifyCheckHash, verifyGenerateHash, type Refusal } from "./rules.js";

/**
 * The gateway's QR API as a local server: generate-qr and check-transaction-2 with the real
 * request signatures, status codes and response shapes, plus /sim/gateway/* controls that play
 * the payer, register merchants and inject faults. The app mounts `api` under /sim/gateway-api
 * and `controls` at the root.
 */

export interface GatewaySimulatorOptions {
  makeQr: (amount: string, currency: "USD" | "KHR") => string;
  clock?: () => Date;
}

/**
 * `rate-limited`: every API call answers HTTP 429 "Too many attempts" (status code 429).
 * `domain-not-whitelisted`: generate-qr answers status code 6, as for a caller whose domain is not whitelisted.
 */
export type GatewayFaultMode =
  "ok" | "down" | "timeout" | "garbage" | "slow" | "rate-limited" | "domain-not-whitelisted";
export const GATEWAY_FAULT_MODES: readonly GatewayFaultMode[] = [
  "ok",
  "down",
  "timeout",
  "garbage",
  "slow",
  "rate-limited",
  "domain-not-whitelisted",
];

export interface GatewaySimTransaction {
  merchantId: string;
  tranId: string;
  amount: string;
  currency: "USD" | "KHR";
  qrString: string;
  status: "PENDING" | "APPROVED" | "DECLINED";
  apv: string;
  createdAt: Date;
  expiresAt: Date;
  callbackUrl: string | null;
  /** What the payer paid, when a test made it differ from the order (`/sim/gateway/pay` amount, currency). */
  paidAmount?: string;
  paidCurrency?: "USD" | "KHR";
  /** The qr_image_template it was generated with (the image is not drawn with it). */
  qrImageTemplate: string;
}

export interface GatewaySimulatorState {
  merchants: Map<string, string>;
  /** Keyed by merchantId + "/" + tranId. */
  transactions: Map<string, GatewaySimTransaction>;
  fault: { mode: GatewayFaultMode; slowMs: number; variant: "text" | "json" };
  /** Calls per endpoint, and transaction-detail calls refused for the per-merchant limit. */
  calls: { generate: number; check: number; detail: number; detailRefused: number; rateLimited: number };
  /** transaction-detail call times per merchant (10 a minute). */
  detailWindow: Map<string, number[]>;
}

export interface GatewaySimulator {
  api: express.Router;
  controls: express.Router;
  registerMerchant(merchantId: string, apiKey: string): void;
  state: GatewaySimulatorState;
}

const APP_STORE = "https://itunes.apple.com/al/app/aba-mobile-bank/id968860649?mt=8";
const PLAY_STORE = "https://play.google.com/store/apps/details?id=com.paygo24.ibank";
/** check-transaction-2 only sees transactions of the last 7 days. */
const CHECK_WINDOW_MS = 7 * 24 * 3600_000;
/** transaction_date is Phnom Penh time (UTC+7), as in the gateway's published example. */
const PHNOM_PENH_OFFSET_MS = 7 * 3600_000;
const PAYMENT_STATUS_CODE = { APPROVED: 0, PENDING: 2, DECLINED: 3 } as const;
/** transaction-detail's documented limit. */
const DETAIL_PER_MINUTE = 10;

export function createGatewaySimulator(options: GatewaySimulatorOptions): GatewaySimulator {
  const clock = options.clock ?? (() => new Date());
  const state: GatewaySimulatorState = {
    merchants: new Map(),
    transactions: new Map(),
    fault: { mode: "ok", slowMs: 1000, variant: "text" },
    calls: { generate: 0, check: 0, detail: 0, detailRefused: 0, rateLimited: 0 },
    detailWindow: new Map(),
  };
  const registerMerchant = (merchantId: string, apiKey: string) => void state.merchants.set(merchantId, apiKey);

  const api = express.Router();
  api.use(express.json({ limit: "64kb" }));
  api.use((_req, res, next) => applyFault(state, res, next));

  api.post("/api/payment-gateway/v1/payments/generate-qr", (req, res) => generateQr(state, options, clock, req, res));

  // Any age, but 10 requests a minute per merchant (then HTTP 429, status 429).
  api.post("/api/payment-gateway/v1/payments/transaction-detail", (req, res) => {
    state.calls.detail++;
    const caller = checkCaller(state, req.body, res);
    if (caller === null) return;
    const { body, tranId } = caller;
    const now = clock().getTime();
    const recent = (state.detailWindow.get(String(body.merchant_id)) ?? []).filter((t) => t > now - 60_000);
    if (recent.length >= DETAIL_PER_MINUTE) {
      state.calls.detailRefused++;
      state.detailWindow.set(String(body.merchant_id), recent);
      return refuse(res, { http: 429, code: "429", message: "Too many attempts." }, tranId);
    }
    state.detailWindow.set(String(body.merchant_id), [...recent, now]);
    const tx = state.transactions.get(`${body.merchant_id}/${tranId}`);
    if (!tx) return refuse(res, { http: 200, code: "6", message: "Transaction not found." }, tranId);
    res.json({
      data: { ...paymentData(tx), tran_id: tranId },
      status: { code: "00", message: "Success!", tran_id: tranId },
    });
  });

  api.post("/api/payment-gateway/v1/payments/check-transaction-2", (req, res) => {
    state.calls.check++;
    const caller = checkCaller(state, req.body, res);
    if (caller === null) return;
    const { body, tranId } = caller;
    const tx = state.transactions.get(`${body.merchant_id}/${tranId}`);
    if (!tx || clock().getTime() - tx.createdAt.getTime() > CHECK_WINDOW_MS) {
      return refuse(res, { http: 200, code: "6", message: "Transaction not found." }, tranId);
    }
    res.json({ data: paymentData(tx), status: { code: "00", message: "Success!", tran_id: tranId } });
  });

  api.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    refuse(res, {
      http: 400,
      code: "48",
      message: "Something went wrong with requested parameters. Please try again or contact the merchant for help.",
    });
  });

  return { api, controls: createControls(state, clock, registerMerchant), registerMerchant, state };
}

/** generate-qr: a signed request from a registered merchant → a pending transaction and its QR (string and PNG). */
async function generateQr(
  state: GatewaySimulatorState,
  options: GatewaySimulatorOptions,
  clock: () => Date,
  req: Request,
  res: Response,
): Promise<void> {
  state.calls.generate++;
  if (state.fault.mode === "domain-not-whitelisted")
    return refuse(res, { http: 200, code: "6", message: "Your domain is not whitelisted." });
  const body = isRecord(req.body) ? req.body : {};
  const apiKey = typeof body.merchant_id === "string" ? state.merchants.get(body.merchant_id) : undefined;
  if (apiKey === undefined) return refuse(res, { http: 403, code: "96", message: "Invalid merchant data" });
  const wrongHash = verifyGenerateHash(body, apiKey);
  if (wrongHash) return refuse(res, wrongHash);
  const order = checkGenerateRequest(body);
  if ("code" in order) return refuse(res, order);
  const key = `${order.merchantId}/${order.tranId}`;
  if (state.transactions.has(key)) return refuse(res, { http: 400, code: "403", message: "Duplicated Transaction ID" });

  const qrString = options.makeQr(order.amount, order.currency);
  const qrImage = await QRCode.toDataURL(qrString, pngOptions());
  const createdAt = clock();
  state.transactions.set(key, {
    merchantId: order.merchantId,
    tranId: order.tranId,
    amount: order.amount,
    currency: order.currency,
    qrString,
    status: "PENDING",
    apv: "",
    createdAt,
    expiresAt: new Date(createdAt.getTime() + order.lifetimeMinutes * 60_000),
    callbackUrl: order.callbackUrl,
    qrImageTemplate: order.qrImageTemplate,
  });
  res.json({
    status: { code: "0", message: "Success.", trace_id: randomUUID() },
    amount: Number(order.amount),
    currency: order.currency,
    qrString,
    qrImage,
    abapay_deeplink: `abamobilebank://ababank.com?type=payway&qrcode=${encodeURIComponent(qrString)}`,
    app_store: APP_STORE,
    play_store: PLAY_STORE,
  });
}

function createControls(
  state: GatewaySimulatorState,
  clock: () => Date,
  registerMerchant: (id: string, key: string) => void,
): express.Router {
  const controls = express.Router();
  controls.use("/sim/gateway", express.json({ limit: "64kb" }));

  controls.post("/sim/gateway/pay", (req, res) => {
    const details: FieldError[] = [];
    const body = bodyRecord(req.body, details);
    const tranId = requireString(body, "tranId", details);
    const outcome = requireOneOf(body, "outcome", ["APPROVED", "DECLINED"] as const, details);
    const merchantId = optionalString(body, "merchantId", details);
    // The payer paid another amount or currency than the order's (the answer's payment_amount/payment_currency).
    const paid = paidOverride(body, details);
    if (details.length > 0) return sendControlError(res, "BAD_USER_INPUT", "invalid pay request", details);

    const matches = [...state.transactions.values()].filter(
      (t) => t.tranId === tranId && (!merchantId || t.merchantId === merchantId),
    );
    if (matches.length === 0) return sendControlError(res, "NOT_FOUND", `no gateway transaction with tranId ${tranId}`);
    if (matches.length > 1)
      return sendControlError(res, "CONFLICT", "several merchants use this tranId; pass merchantId");
    const tx = matches[0];
    if (tx.status !== "PENDING") return sendControlError(res, "CONFLICT", `transaction is already ${tx.status}`);
    if (clock().getTime() >= tx.expiresAt.getTime()) {
      return sendControlError(
        res,
        "CONFLICT",
        `transaction expired at ${tx.expiresAt.toISOString()}; its QR no longer accepts payment`,
      );
    }
    tx.status = outcome;
    if (paid.amount !== undefined) tx.paidAmount = paid.amount;
    if (paid.currency !== undefined) tx.paidCurrency = paid.currency;
    if (outcome === "APPROVED") {
      tx.apv = String(randomInt(100000, 1000000));
      if (tx.callbackUrl) void pushback(tx.callbackUrl, tx);
    }
    res.json({ merchantId: tx.merchantId, tranId: tx.tranId, paymentStatus: tx.status, apv: tx.apv });
  });

  controls.post("/sim/gateway/merchants", (req, res) => {
    const details: FieldError[] = [];
    const body = bodyRecord(req.body, details);
    const merchantId = requireString(body, "merchantId", details, {
      pattern: /^.{1,30}$/,
      message: "must be at most 30 characters",
    });
    const apiKey = requireString(body, "apiKey", details);
    if (details.length > 0) return sendControlError(res, "BAD_USER_INPUT", "invalid merchant", details);
    registerMerchant(merchantId, apiKey);
    res.json({ merchantId });
  });

  controls.post("/sim/gateway/fault", faultControl(GATEWAY_FAULT_MODES, state));

  controls.use("/sim/gateway", controlBodyErrors);
  return controls;
}

/** `/sim/gateway/pay`'s optional `amount` (decimal text) and `currency` (USD, KHR): what the payer paid instead. */
function paidOverride(
  body: Record<string, unknown>,
  details: FieldError[],
): { amount?: string; currency?: "USD" | "KHR" } {
  const amount = optionalString(body, "amount", details);
  const currency = optionalString(body, "currency", details);
  if (amount !== undefined && !/^\d+(\.\d{1,2})?$/.test(amount))
    details.push({ field: "amount", message: 'must be a decimal string such as "10.50"' });
  if (currency !== undefined && currency !== "USD" && currency !== "KHR")
    details.push({ field: "currency", message: "must be USD or KHR" });
  return { amount, currency: currency as "USD" | "KHR" | undefined };
}

/**
 * A fresh object every call: qrcode writes width/height into the renderer options it is given.
 * PNG filter "Up" only (pngjs option, absent from @types/qrcode): QR rows repeat within a module,
 * so it compresses well, and it skips pngjs's five-filter trial per row — 4.8 ms instead of
 * 14.8 ms per 320 px image here, and ~50 ms instead of ~1.5 s inside jest's VM.
 */
function pngOptions(): QRCodeToDataURLOptions {
  const options: QRCodeToDataURLOptionsOther & { rendererOpts: { filterType: number } } = {
    type: "image/png",
    errorCorrectionLevel: "M",
    margin: 2,
    width: 320,
    rendererOpts: { filterType: 2 },
  };
  return options;
}

function paymentData(tx: GatewaySimTransaction): Record<string, unknown> {
  const amount = Number(tx.amount);
  return {
    payment_status_code: PAYMENT_STATUS_CODE[tx.status],
    total_amount: amount,
    original_amount: amount,
    refund_amount: 0,
    discount_amount: 0,
    payment_amount: tx.status === "APPROVED" ? Number(tx.paidAmount ?? tx.amount) : 0,
    payment_currency: tx.paidCurrency ?? tx.currency,
    apv: tx.apv,
    payment_status: tx.status,
    transaction_date: new Date(tx.createdAt.getTime() + PHNOM_PENH_OFFSET_MS)
      .toISOString()
      .replace("T", " ")
      .slice(0, 19),
  };
}

/**
 * The caller of a check endpoint (transaction-detail, check-transaction-2): a known merchant with a right hash.
 * Otherwise the refusal is sent and null returned.
 */
function checkCaller(
  state: GatewaySimulatorState,
  raw: unknown,
  res: Response,
): { body: Record<string, unknown>; tranId: string } | null {
  const body = isRecord(raw) ? raw : {};
  const tranId = typeof body.tran_id === "string" ? body.tran_id : "";
  const apiKey = typeof body.merchant_id === "string" ? state.merchants.get(body.merchant_id) : undefined;
  if (apiKey === undefined) {
    refuse(res, { http: 403, code: "8", message: "Invalid merchant profile" }, tranId);
    return null;
  }
  const wrongHash = verifyCheckHash(body, apiKey);
  if (wrongHash) {
    refuse(res, wrongHash, tranId);
    return null;
  }
  return { body, tranId };
}

function refuse(res: Response, refusal: Refusal, tranId?: string): void {
  const status: Record<string, unknown> = { code: refusal.code, message: refusal.message };
  if (tranId !== undefined) status.tran_id = tranId;
  else status.trace_id = randomUUID();
  res.status(refusal.http).json({ status });
}

/** The gateway's pushback after a payment: a hint for the merchant to check, not proof. */
async function pushback(url: string, tx: GatewaySimTransaction): Promise<void> {
  try {
    await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tran_id: tx.tranId, apv: tx.apv, status: "00" }),
      signal: AbortSignal.timeout(5000),
    });
  } catch {
    // The real gateway does not tell the payer when the merchant's endpoint is down either.
  }
}

async function applyFault(state: GatewaySimulatorState, res: Response, next: NextFunction): Promise<void> {
  const { mode, slowMs, variant } = state.fault;
  if (mode === "rate-limited") {
    state.calls.rateLimited++;
    res.status(429).json({ status: { code: "429", message: "Too many attempts.", trace_id: randomUUID() } });
    return;
  }
  if (mode === "down") {
    res.status(503).type("text/html").send("<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>");
    return;
  }
  if (mode === "timeout") return; // never answer: the client's own timeout ends the exchange
  if (mode === "garbage") {
    if (variant === "json") res.status(200).json({ result: "ok", payload: null });
    else res.status(200).type("text/html").send("<!doctype html><html><body>Maintenance</body></html>");
    return;
  }
  if (mode === "slow") await sleep(slowMs);
  next();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
