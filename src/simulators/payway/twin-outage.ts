// The PayWay twin's API when it is down or busy (fault modes `outage` and `rate-limited`): every call answered with a
// 5xx or a 429 for a number of calls or a while, then it recovers by itself. What the real one's callers meet: the
// origin's own 500, and Cloudflare's error pages (HTML with a cf-ray) for a gateway error (502–504) or an origin it
// cannot reach (520–524) and for a rate limit (429, error 1015). Sources: docs/link-simulator.md.

import { randomBytes } from "node:crypto";
import type { Request, Response } from "express";
import type { TwinState } from "./twin-fault.js";
import { renderTwinNotice } from "./twin-page.js";

const KEPT_ANSWERS = 200;

/** Cloudflare's wording of each error it shows in front of an origin. */
const CLOUDFLARE_ERRORS: Record<number, string> = {
  502: "Bad gateway",
  503: "Service unavailable",
  504: "Gateway time-out",
  520: "Web server is returning an unknown error",
  521: "Web server is down",
  522: "Connection timed out",
  523: "Origin is unreachable",
  524: "A timeout occurred",
};

/**
 * Answers `req` as the API in an outage or under a rate limit would, and true; false when no such fault applies now
 * (a fault whose calls or time are used up ends: the mode goes back to `ok`). Preflights pass (counted nowhere).
 */
export function outageAnswer(state: TwinState, clock: () => number, req: Request, res: Response): boolean {
  const f = state.fault;
  if ((f.mode !== "outage" && f.mode !== "rate-limited") || req.method === "OPTIONS") return false;
  const now = clock();
  if ((f.calls !== null && f.calls <= 0) || (f.until !== null && now >= f.until)) {
    state.fault = { ...f, mode: "ok", calls: null, until: null };
    return false;
  }
  if (f.calls !== null) f.calls -= 1;
  const status = f.mode === "rate-limited" ? 429 : f.httpStatus;
  // Whose poll it was (a status poll carries its payment's token header; the body is not read yet), so a test can tell
  // one payment's polls from another's.
  state.faultAnswers.push({ at: now, status, token: req.get("token") ?? null });
  if (state.faultAnswers.length > KEPT_ANSWERS) state.faultAnswers.shift();
  if (status === 500) {
    res
      .status(500)
      .json({ message: "Internal Server Error", status: { code: "500", message: "Internal Server Error" } });
    return true;
  }
  const ray = `${randomBytes(8).toString("hex")}-SIN`;
  res.status(status).set({ server: "cloudflare", "cf-ray": ray });
  if (status === 429 && f.retryAfter !== null) res.set("retry-after", f.retryAfter);
  const title =
    status === 429 ? "Error 1015: You are being rate limited" : `Error ${status}: ${CLOUDFLARE_ERRORS[status] ?? ""}`;
  res.type("html").send(renderTwinNotice(`${title} | Cloudflare`, `${title}. Cloudflare Ray ID: ${ray}`));
  return true;
}
