// One check-payment-status poll of a PayWay link, sent by the worker itself: the page's own request (its token
// header, client id and original request_time, a fresh device id and its hash, the page's cookies, Origin and
// Referer), and what the answer means. The same reading serves a poll sent through a held page (page-poll.ts).

import { createUpstreamClient, type UpstreamClient } from "../upstreams/http-client.js";
import { isRecord, PAYWAY_OK, PAYWAY_PATHS, statusPollBody } from "../upstreams/payway.js";
import { ANSWER_MAX_BYTES } from "./answer-body.js";
import type { LinkPollSession } from "./link-protocol.js";
import { readPaywayStatus, type PaywayStatus } from "./payway-protocol.js";
import { classifyRefusal, type PageRefusal, type RefusedAnswer } from "./page-refusal.js";

export type PollAnswer =
  | { kind: "status"; status: PaywayStatus }
  /**
   * HTTP 403 (or Cloudflare's challenge on another status): the edge refusing this caller (a challenge or block
   * page), or the API refusing the request's data (JSON "Invalid Token", "Invalid Data"): `refusal.kind` says which.
   */
  | { kind: "refused"; detail: string; refusal: PageRefusal }
  /**
   * No usable answer. `outage`: network error, timeout, HTTP 408, 429 or 5xx (Cloudflare's 520–524 among them),
   * unreadable; else a definite error (another 4xx, a refusal in the API's own JSON). Neither ends a payment
   * (docs/decisions/0189-link-outages-never-fail-a-payment.md). `retryAfter`: a 429's Retry-After header as sent (null:
   * none), for the worker to hold its polls back.
   */
  | { kind: "fault"; detail: string; outage: boolean; retryAfter?: string | null };

/** Waited out: the upstream or something in front of it (Cloudflare) is down, slow or busy, not refusing this poll. */
export function isOutageStatus(httpStatus: number): boolean {
  return httpStatus === 408 || httpStatus === 429 || (httpStatus >= 500 && httpStatus <= 599);
}

/** The poll as the page sends it (a fresh device id and hash each time). */
export function pollRequest(s: LinkPollSession): { url: string; headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/plain, */*",
    language: s.language ?? "en",
    token: s.token,
    origin: s.origin,
    referer: s.referer,
  };
  if (s.cookies !== "") headers.cookie = s.cookies;
  // The page's own user agent (the pool's: browser-identity.ts); a session stored while pages still said
  // "HeadlessChrome" is sent as the Chrome it is, which the edge does not challenge (decision 0197).
  if (s.userAgent !== null) headers["user-agent"] = s.userAgent.replace(/HeadlessChrome/g, "Chrome");
  return {
    url: s.apiOrigin + PAYWAY_PATHS.checkPaymentStatus,
    headers,
    body: JSON.stringify(statusPollBody(s.clientId, s.requestTime)),
  };
}

/**
 * How polls leave this process: the upstreams' HTTP client on a bounded keep-alive pool (thousands of polls share
 * 32 sockets), through LINK_PROXY if set. Each poll names its URL (the link's API origin) and its timeout.
 */
export function pollClient(proxyUrl: string | null, timeoutMs: number): UpstreamClient {
  return createUpstreamClient({
    upstream: "payway",
    label: "PayWay API",
    timeoutMs,
    proxy: proxyUrl,
    connections: 32,
    keepAliveTimeoutMs: 10_000,
    // A status answer is a few hundred bytes: one of 150 MB is refused at the cap, not read whole.
    maxBytes: ANSWER_MAX_BYTES,
  });
}

export async function pollOnce(client: UpstreamClient, s: LinkPollSession, timeoutMs: number): Promise<PollAnswer> {
  const req = pollRequest(s);
  const answer = await client.exchange({
    path: PAYWAY_PATHS.checkPaymentStatus,
    url: req.url,
    headers: req.headers,
    body: req.body,
    timeoutMs,
  });
  if (!answer.ok) return { kind: "fault", detail: `check-payment-status: ${answer.what}`, outage: true };
  return readAnswer(answer.status, answer.text, answer.headers);
}

/**
 * What an HTTP answer of check-payment-status means: its headers tell a Cloudflare challenge (page-refusal.ts), and
 * a 429's Retry-After how long to hold back.
 */
export function readAnswer(httpStatus: number, text: string, headers?: RefusedAnswer["headers"]): PollAnswer {
  const refused = classifyRefusal({ status: httpStatus, headers, body: text });
  if (refused !== null)
    return { kind: "refused", detail: `check-payment-status answered ${refused.detail}`, refusal: refused };
  if (httpStatus === 429) {
    const retryAfter = headers?.["retry-after"];
    return {
      kind: "fault",
      detail: `check-payment-status answered HTTP 429 (${snippet(text)})`,
      outage: true,
      retryAfter: (Array.isArray(retryAfter) ? retryAfter[0] : retryAfter) ?? null,
    };
  }
  if (httpStatus < 200 || httpStatus > 299)
    return {
      kind: "fault",
      detail: `check-payment-status answered HTTP ${httpStatus} (${snippet(text)})`,
      outage: isOutageStatus(httpStatus),
    };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { kind: "fault", detail: "check-payment-status answered something that is not JSON", outage: true };
  }
  const status = readPaywayStatus(body);
  if (status !== null) return { kind: "status", status };
  // No action, and a status code other than "00": PayWay refuses this poll. Only `data.action` says a payment was
  // declined (payway-protocol.ts): a refusal's words ("rejected", "cancelled"…) may be about the poll itself, so it
  // is a definite error, which fails nothing (decision 0189).
  const refusal = refusalOf(body);
  if (refusal !== null) return refusal;
  return { kind: "fault", detail: `check-payment-status answered no data.action (${snippet(text)})`, outage: true };
}

function refusalOf(body: unknown): PollAnswer | null {
  const status = isRecord(body) && isRecord(body.status) ? body.status : null;
  const code = status === null ? null : String(status.code ?? "");
  if (code === null || code === "" || code === PAYWAY_OK) return null;
  const message = typeof status?.message === "string" ? status.message : "";
  return { kind: "fault", detail: `check-payment-status answered status ${code} "${message}"`, outage: false };
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 120 ? `${flat.slice(0, 120)}…` : flat || "empty body";
}
