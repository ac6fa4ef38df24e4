import type { Request, RequestHandler, Response } from "express";
import type { FieldError } from "../../errors.js";
import { bodyRecord, sendControlError } from "../http.js";

/**
 * The network refusing us, as tests drive it (POST /sim/network/limits): every token refused as the network refuses
 * an expired or revoked one (HTTP 401, errorCode 6), and a rate limit answering 429 with Retry-After. The network
 * documents 429 but publishes no limit, so the limit here is whatever a test sets; the 429's body is not documented
 * either, so it is plain text the client must not rely on.
 */
export interface NetworkLimits {
  refuseTokens: boolean;
  /** API calls answered per second (a sliding second of real time); over it, 429. null: no limit; 0: every call. */
  perSecond: number | null;
  /** The Retry-After sent with a 429: whole seconds, an HTTP date that many seconds ahead, or none. */
  retryAfterS: number;
  retryAfterAs: "seconds" | "date" | "none";
}

export function defaultLimits(): NetworkLimits {
  return { refuseTokens: false, perSecond: null, retryAfterS: 5, retryAfterAs: "seconds" };
}

interface LimitedState {
  limits: NetworkLimits;
  calls: { rateLimited: number; unauthorized: number };
}

/** 429 once `perSecond` calls were answered within the last second of real time (the clock tests move is not it). */
export function rateLimiter(state: LimitedState, clock: () => Date): RequestHandler {
  const recent: number[] = [];
  return (_req, res, next) => {
    const { perSecond, retryAfterS, retryAfterAs } = state.limits;
    if (perSecond === null) return next();
    const now = performance.now();
    while (recent.length > 0 && recent[0] <= now - 1000) recent.shift();
    if (recent.length < perSecond) {
      recent.push(now);
      return next();
    }
    state.calls.rateLimited++;
    if (retryAfterAs === "seconds") res.set("retry-after", String(retryAfterS));
    if (retryAfterAs === "date") res.set("retry-after", new Date(clock().getTime() + retryAfterS * 1000).toUTCString());
    res.status(429).type("text/plain").send("Too Many Requests");
  };
}

/** Refuses every bearer token while `refuseTokens` is on, with the network's unauthorized envelope. */
export function tokenRefuser(state: LimitedState): RequestHandler {
  return (_req, res, next) => {
    if (!state.limits.refuseTokens) return next();
    state.calls.unauthorized++;
    res.status(401).json({ responseCode: 1, responseMessage: "Unauthorized", errorCode: 6, data: null });
  };
}

/** POST /sim/network/limits {refuseTokens?, perSecond?, retryAfterS?, retryAfterAs?}: the limits now in force. */
export function limitsControl(state: LimitedState): (req: Request, res: Response) => void {
  return (req, res) => {
    const details: FieldError[] = [];
    const body = bodyRecord(req.body, details);
    const next = { ...state.limits };
    if (body.refuseTokens !== undefined) {
      if (typeof body.refuseTokens === "boolean") next.refuseTokens = body.refuseTokens;
      else details.push({ field: "refuseTokens", message: "must be a boolean" });
    }
    if (body.perSecond !== undefined) {
      if (body.perSecond === null || (Number.isInteger(body.perSecond) && (body.perSecond as number) >= 0))
        next.perSecond = body.perSecond as number | null;
      else details.push({ field: "perSecond", message: "must be a whole number from 0, or null (no limit)" });
    }
    if (body.retryAfterS !== undefined) {
      if (Number.isInteger(body.retryAfterS) && (body.retryAfterS as number) >= 0)
        next.retryAfterS = body.retryAfterS as number;
      else details.push({ field: "retryAfterS", message: "must be a whole number of seconds from 0" });
    }
    if (body.retryAfterAs !== undefined) {
      if (body.retryAfterAs === "seconds" || body.retryAfterAs === "date" || body.retryAfterAs === "none")
        next.retryAfterAs = body.retryAfterAs;
      else details.push({ field: "retryAfterAs", message: "must be seconds, date or none" });
    }
    if (details.length > 0) return sendControlError(res, "BAD_USER_INPUT", "invalid limits request", details);
    state.limits = next;
    res.json(next);
  };
}
