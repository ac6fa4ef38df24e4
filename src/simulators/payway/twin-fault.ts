import type { Request, RequestHandler } from "express";
import type { FieldError } from "../../errors.js";
import { PAYWAY_OK } from "../../upstreams/payway.js";
import { bodyRecord, optionalMs, requireOneOf, sendControlError } from "../http.js";

/**
 * ok; forbidden: Cloudflare's 403 page on the page and the API, for one caller address or all (a datacenter or
 * foreign address refused); slow: the API answers after slowMs; status: list-payment-options answers a status
 * code other than "00"; bot-check: a status poll without the header only a browser's fetch sends (Sec-Fetch-Site)
 * is refused.
 * Our own hostile-test modes (no public source: what a compromised or malicious page or API could do):
 * hostile: the page's script replaces fetch, XMLHttpRequest, Response's readers and JSON.parse so that every status
 * poll made through them reads "approved", while the API refuses polls as bot-check does (so a worker falls back
 * to a page); payee: list-payment-options issues QRs payable to `payee`; oversize: `call`'s answers are `bytes`
 * long (streamed, no length given); foreign-receipt: an approval's download_receipt is on `receiptOrigin`;
 * webrtc: the page sends WebRTC (STUN over UDP) to 127.0.0.1:`udpPort` as it loads.
 * outage: the API answers `calls` calls (or for `durationMs`; neither: until `ok`) with `httpStatus` (500, 502–504,
 * 520–524; Cloudflare's pages with cf-ray but for 500), then recovers; rate-limited: it answers them 429 with
 * `retryAfter` (seconds or an HTTP date; none if null). twin-outage.ts; the sources are in docs/link-simulator.md.
 */
export type TwinFaultMode =
  | "ok"
  | "forbidden"
  | "slow"
  | "status"
  | "bot-check"
  | "hostile"
  | "payee"
  | "oversize"
  | "foreign-receipt"
  | "webrtc"
  | "outage"
  | "rate-limited";
export const TWIN_FAULT_MODES: readonly TwinFaultMode[] = [
  "ok",
  "forbidden",
  "slow",
  "status",
  "bot-check",
  "hostile",
  "payee",
  "oversize",
  "foreign-receipt",
  "webrtc",
  "outage",
  "rate-limited",
];

/** What an `outage` may answer: the origin's 500, a gateway's 502–504, Cloudflare's own 520–524. */
export const OUTAGE_HTTP_STATUSES: readonly number[] = [500, 502, 503, 504, 520, 521, 522, 523, 524];

/** The API calls an `oversize` fault can swell. */
export type TwinCall = "list-payment-options" | "check-payment-status";
const TWIN_CALLS: readonly TwinCall[] = ["list-payment-options", "check-payment-status"];

export interface TwinFault {
  mode: TwinFaultMode;
  /** forbidden: only this caller address (null: everyone). */
  address: string | null;
  slowMs: number;
  /** status: the code and message list-payment-options answers. */
  code: string;
  message: string;
  /** payee: the KHQR account the QRs pay. */
  payee: string;
  /** oversize: the answer's length in bytes, and which call's. */
  bytes: number;
  call: TwinCall;
  /** foreign-receipt: the origin receipts are on. */
  receiptOrigin: string;
  /** webrtc: the loopback UDP port the page's WebRTC aims at. */
  udpPort: number;
  /** outage: the HTTP status answered. */
  httpStatus: number;
  /** outage, rate-limited: calls still to answer so (null: no count); `until`: the twin's time it ends (null: none). */
  calls: number | null;
  until: number | null;
  /** rate-limited: the Retry-After header sent (null: none). */
  retryAfter: string | null;
}

export interface TwinState {
  fault: TwinFault;
  /** When (the twin's clock) and with what status the API answered calls in an outage or rate-limited mode (last 200). */
  faultAnswers: { at: number; status: number }[];
}

export function initialTwinState(): TwinState {
  return {
    fault: {
      mode: "ok",
      address: null,
      slowMs: 1000,
      code: "99",
      message: "Payment link is not available",
      payee: "attacker@aclb",
      bytes: 150 * 1024 * 1024,
      call: "list-payment-options",
      receiptOrigin: "https://receipts.example",
      udpPort: 9,
      httpStatus: 503,
      calls: null,
      until: null,
      retryAfter: null,
    },
    faultAnswers: [],
  };
}

/** The remote address as the twin sees it (IPv4-mapped IPv6 written as IPv4). */
export function callerAddress(req: Request): string {
  return (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
}

/**
 * `POST /sim/payway/fault {mode, address?, slowMs?, code?, message?, payee?, bytes?, call?, receiptOrigin?,
 * udpPort?, httpStatus?, calls?, durationMs?, retryAfter?}`. `clock`: the twin's (an outage's `durationMs` runs on it).
 */
export function twinFaultControl(state: TwinState, clock: () => number = Date.now): RequestHandler {
  return (req, res) => {
    const details: FieldError[] = [];
    const body = bodyRecord(req.body, details);
    const mode = requireOneOf(body, "mode", TWIN_FAULT_MODES, details);
    const slowMs = optionalMs(body, "slowMs", details);
    const text = (field: string, max: number): string | undefined => {
      const v = body[field];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== "string" || v.length === 0 || v.length > max) details.push({ field, message: "a short string" });
      return typeof v === "string" ? v : undefined;
    };
    const int = (field: string, min: number, max: number): number | undefined => {
      const v = body[field];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max)
        details.push({ field, message: `an integer from ${min} to ${max}` });
      return typeof v === "number" ? v : undefined;
    };
    const address = text("address", 64) ?? null;
    const code = text("code", 8);
    const message = text("message", 200);
    const payee = text("payee", 32);
    const receiptOrigin = text("receiptOrigin", 200);
    const bytes = int("bytes", 1, 1024 * 1024 * 1024);
    const udpPort = int("udpPort", 1, 65535);
    const httpStatus = int("httpStatus", 500, 599);
    const calls = int("calls", 1, 1_000_000);
    const durationMs = optionalMs(body, "durationMs", details, 24 * 3600_000);
    const retryAfter = text("retryAfter", 64) ?? null;
    if (httpStatus !== undefined && !OUTAGE_HTTP_STATUSES.includes(httpStatus))
      details.push({ field: "httpStatus", message: `one of ${OUTAGE_HTTP_STATUSES.join(", ")}` });
    const call = body.call === undefined ? undefined : requireOneOf(body, "call", TWIN_CALLS, details);
    if (mode === "status" && code === PAYWAY_OK)
      details.push({ field: "code", message: 'must not be "00" (that is success)' });
    if (receiptOrigin !== undefined && !isOrigin(receiptOrigin))
      details.push({ field: "receiptOrigin", message: "an origin: scheme://host[:port]" });
    if (details.length > 0) return sendControlError(res, "BAD_USER_INPUT", "invalid fault request", details);
    const prev = state.fault;
    state.fault = {
      mode,
      address,
      slowMs: slowMs ?? prev.slowMs,
      code: code ?? prev.code,
      message: message ?? prev.message,
      payee: payee ?? prev.payee,
      bytes: bytes ?? prev.bytes,
      call: call ?? prev.call,
      receiptOrigin: receiptOrigin ?? prev.receiptOrigin,
      udpPort: udpPort ?? prev.udpPort,
      httpStatus: httpStatus ?? prev.httpStatus,
      calls: calls ?? null,
      until: durationMs === undefined ? null : clock() + durationMs,
      retryAfter,
    };
    res.json(state.fault);
  };
}

function isOrigin(v: string): boolean {
  try {
    return new URL(v).origin === v;
  } catch {
    return false;
  }
}
