import type { Request, RequestHandler } from "express";
import type { FieldError } from "../../errors.js";
import { PAYWAY_OK } from "../../upstreams/payway.js";
import { bodyRecord, optionalMs, requireOneOf, sendControlError } from "../http.js";
import { faultLinkOptions, LINK_FAULT_MODES, type TwinLinkOptions } from "./twin-layout.js";

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
 * Page variants for every link while on (twin-layout.ts; a link can also have them of its own): hydration: Continue an
 * <a> disabled until the page hydrates, a phone field first; fixed-amount; required-fields.
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
  | "hydration"
  | "fixed-amount"
  | "required-fields";
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
  "hydration",
  "fixed-amount",
  "required-fields",
];

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
  /** hydration, fixed-amount, required-fields: what every link's page is built with meanwhile. */
  link: Partial<TwinLinkOptions>;
}

export interface TwinState {
  fault: TwinFault;
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
      link: {},
    },
  };
}

/** The remote address as the twin sees it (IPv4-mapped IPv6 written as IPv4). */
export function callerAddress(req: Request): string {
  return (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
}

/**
 * `POST /sim/payway/fault {mode, address?, slowMs?, code?, message?, payee?, bytes?, call?, receiptOrigin?,
 * udpPort?}`.
 */
export function twinFaultControl(state: TwinState): RequestHandler {
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
    const call = body.call === undefined ? undefined : requireOneOf(body, "call", TWIN_CALLS, details);
    const pageMode = LINK_FAULT_MODES.find((m) => m === mode);
    const link = pageMode === undefined ? {} : faultLinkOptions(pageMode, body, details);
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
      link,
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
