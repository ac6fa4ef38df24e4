import type { Request, RequestHandler } from "express";
import type { FieldError } from "../../errors.js";
import { PAYWAY_OK } from "../../upstreams/payway.js";
import { bodyRecord, optionalMs, requireOneOf, sendControlError } from "../http.js";

/**
 * ok; forbidden: Cloudflare's 403 page on the page and the API, for one caller address or all (a datacenter or
 * foreign address refused); slow: the API answers after slowMs; status: list-payment-options answers a status
 * code other than "00"; bot-check: a status poll without the header only a browser's fetch sends (Sec-Fetch-Site) is refused.
 */
export type TwinFaultMode = "ok" | "forbidden" | "slow" | "status" | "bot-check";
export const TWIN_FAULT_MODES: readonly TwinFaultMode[] = ["ok", "forbidden", "slow", "status", "bot-check"];

export interface TwinFault {
  mode: TwinFaultMode;
  /** forbidden: only this caller address (null: everyone). */
  address: string | null;
  slowMs: number;
  /** status: the code and message list-payment-options answers. */
  code: string;
  message: string;
}

export interface TwinState {
  fault: TwinFault;
}

export function initialTwinState(): TwinState {
  return { fault: { mode: "ok", address: null, slowMs: 1000, code: "99", message: "Payment link is not available" } };
}

/** The remote address as the twin sees it (IPv4-mapped IPv6 written as IPv4). */
export function callerAddress(req: Request): string {
  return (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
}

/** `POST /sim/payway/fault {mode, address?, slowMs?, code?, message?}`. */
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
    const address = text("address", 64) ?? null;
    const code = text("code", 8);
    const message = text("message", 200);
    if (mode === "status" && code === PAYWAY_OK)
      details.push({ field: "code", message: 'must not be "00" (that is success)' });
    if (details.length > 0) return sendControlError(res, "BAD_USER_INPUT", "invalid fault request", details);
    const prev = state.fault;
    state.fault = {
      mode,
      address,
      slowMs: slowMs ?? prev.slowMs,
      code: code ?? prev.code,
      message: message ?? prev.message,
    };
    res.json(state.fault);
  };
}
