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
 * webrtc: the page sends WebRTC (STUN over UDP) to 127.0.0.1:`udpPort` as it loads; embeds: the page pulls in each
 * of `origins` as a page with analytics or chat does (a script, an iframe, a fetch, a beacon, a WebSocket, a worker's
 * fetch).
 * From public sources again: qr-status: list-payment-options answers the QR (qr_string, token, client_id) with its
 * `status` absent or with code "0" (`qrStatus`), as Eavheang/payway-merchant's sample answer has none and
 * somvannda/chmabapay accepts "0".
 * From public sources again (twin-edge.ts; docs/link-simulator.md "Refusals told apart"):
 * challenge: Cloudflare's managed challenge (403, cf-mitigated: challenge) for a headless fingerprint — a page load or
 * API call whose User-Agent or Sec-CH-UA says HeadlessChrome, or a QR request from a page whose script found
 * navigator.webdriver true (or never ran); invalid-data-once: list-payment-options answers 403 JSON "Invalid Data"
 * once (or `calls` times), then as usual; invalid-token: check-payment-status answers 403 JSON "Invalid Token", for `calls` polls or
 * (no `calls`) until the mode changes.
 * Page variants for every link while on (twin-layout.ts; a link can also have them of its own): hydration: Continue an
 * <a> disabled until the page hydrates, a phone field first; fixed-amount; required-fields.
 * outage: the API answers `calls` calls (or for `durationMs`; neither: until `ok`) with `httpStatus` (500, 502–504,
 * 520–524; Cloudflare's pages with cf-ray but for 500), then recovers; rate-limited: it answers them 429 with
 * `retryAfter` (seconds or an HTTP date; none if null). twin-outage.ts; the sources are in docs/link-simulator.md.
 * approve-late: the payer approves every client `afterMs` after its creation (the twin's clock), hours after the QR's
 * 180 s if asked: somvannda/chmabapay saw an approval 9.5 minutes late, and the QR lives 30 days (KHQR tag 99).
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
  | "embeds"
  | "qr-status"
  | "challenge"
  | "invalid-data-once"
  | "invalid-token"
  | "hydration"
  | "fixed-amount"
  | "required-fields"
  | "outage"
  | "rate-limited"
  | "approve-late";
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
  "embeds",
  "qr-status",
  "challenge",
  "invalid-data-once",
  "invalid-token",
  "hydration",
  "fixed-amount",
  "required-fields",
  "outage",
  "rate-limited",
  "approve-late",
];

/** qr-status: how the QR answer's status reads. */
export type TwinQrStatus = "absent" | "0";
const TWIN_QR_STATUSES: readonly TwinQrStatus[] = ["absent", "0"];

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
  /** embeds: the other sites (origins) the page pulls in. */
  origins: string[];
  /** qr-status: the QR answer without `status`, or with `status.code` "0". */
  qrStatus: TwinQrStatus;
  /** invalid-data-once, invalid-token: the refusals still to answer (null: until the mode changes). */
  remaining: number | null;
  /** hydration, fixed-amount, required-fields: what every link's page is built with meanwhile. */
  link: Partial<TwinLinkOptions>;
  /** outage: the HTTP status answered. */
  httpStatus: number;
  /** outage, rate-limited: calls still to answer so (null: no count); `until`: the twin's time it ends (null: none). */
  calls: number | null;
  until: number | null;
  /** rate-limited: the Retry-After header sent (null: none). */
  retryAfter: string | null;
  /** approve-late: how long after its creation (the twin's clock) each client is approved. */
  afterMs: number;
}

export interface TwinState {
  fault: TwinFault;
  /** When (the twin's clock) and with what status the API answered calls in an outage or rate-limited mode (last 200). */
  faultAnswers: { at: number; status: number; token: string | null }[];
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
      origins: [],
      qrStatus: "absent",
      remaining: null,
      link: {},
      httpStatus: 503,
      calls: null,
      until: null,
      retryAfter: null,
      afterMs: 0,
    },
    faultAnswers: [],
  };
}

/** Whether a counted refusal mode (invalid-data-once, invalid-token) refuses this call; counts it down if so. */
export function takeRefusal(state: TwinState, mode: "invalid-data-once" | "invalid-token"): boolean {
  const f = state.fault;
  if (f.mode !== mode || f.remaining === 0) return false;
  if (f.remaining !== null) f.remaining -= 1;
  return true;
}

/** The remote address as the twin sees it (IPv4-mapped IPv6 written as IPv4). */
export function callerAddress(req: Request): string {
  return (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
}

/**
 * `POST /sim/payway/fault {mode, address?, slowMs?, code?, message?, payee?, bytes?, call?, receiptOrigin?,
 * udpPort?, qrStatus?, calls?, httpStatus?, durationMs?, retryAfter?, afterMs?}`. `clock`: the twin's (an outage's `durationMs` runs
 * on it).
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
    // Up to the QR's own life: 30 days.
    const afterMs = optionalMs(body, "afterMs", details, 30 * 24 * 3600_000);
    if (mode === "approve-late" && afterMs === undefined)
      details.push({ field: "afterMs", message: "required: how long after its creation each client is approved" });
    if (httpStatus !== undefined && !OUTAGE_HTTP_STATUSES.includes(httpStatus))
      details.push({ field: "httpStatus", message: `one of ${OUTAGE_HTTP_STATUSES.join(", ")}` });
    const call = body.call === undefined ? undefined : requireOneOf(body, "call", TWIN_CALLS, details);
    const qrStatus =
      body.qrStatus === undefined ? undefined : requireOneOf(body, "qrStatus", TWIN_QR_STATUSES, details);
    const pageMode = LINK_FAULT_MODES.find((m) => m === mode);
    const link = pageMode === undefined ? {} : faultLinkOptions(pageMode, body, details);
    if (mode === "status" && code === PAYWAY_OK)
      details.push({ field: "code", message: 'must not be "00" (that is success)' });
    const origins = body.origins;
    if (origins !== undefined && !(Array.isArray(origins) && origins.length <= 10 && origins.every(isOriginValue)))
      details.push({ field: "origins", message: "at most 10 origins: scheme://host[:port]" });
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
      origins: Array.isArray(origins) ? (origins as string[]) : prev.origins,
      qrStatus: qrStatus ?? prev.qrStatus,
      // invalid-data-once refuses once unless told `calls` (a page refused on its fresh reload too).
      remaining: mode === "invalid-data-once" ? (calls ?? 1) : mode === "invalid-token" ? (calls ?? null) : null,
      link,
      httpStatus: httpStatus ?? prev.httpStatus,
      calls: calls ?? null,
      until: durationMs === undefined ? null : clock() + durationMs,
      retryAfter,
      afterMs: afterMs ?? prev.afterMs,
    };
    res.json(state.fault);
  };
}

function isOriginValue(v: unknown): boolean {
  return typeof v === "string" && isOrigin(v);
}

function isOrigin(v: string): boolean {
  try {
    return new URL(v).origin === v;
  } catch {
    return false;
  }
}
