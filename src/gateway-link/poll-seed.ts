// What a worker needs to poll a payment's status without its page, taken from the page that issued the QR:
// the parts of the QR answer (token, client id, request_time), the headers the page's own request carried
// and the cookies the browser holds for the API (plus the page's bot-management cookie, see below).

import type { CDPSession } from "puppeteer-core";
import type { LinkPageProtocol, LinkPollSession, LinkSessionInfo } from "./link-protocol.js";
import { PageTrafficError, type PageTraffic } from "./page-traffic.js";

/** Cloudflare's bot-management cookie: a headless strategy that works forwards the page's (medium confidence). */
const BOT_COOKIE = "__cf_bm";

export async function pollSessionOf(
  session: CDPSession,
  info: LinkSessionInfo,
  traffic: PageTraffic,
  linkUrl: string,
  protocol: LinkPageProtocol,
): Promise<LinkPollSession> {
  const request = traffic.sessionRequest;
  if (info.poll === undefined || request === null || protocol.apiOrigin === undefined)
    throw new PageTrafficError("the payment page's QR answer carried nothing to follow the payment with", false);
  const header = (name: string): string | null => {
    for (const [k, v] of Object.entries(request.headers)) if (k.toLowerCase() === name) return v;
    return null;
  };
  const linkOrigin = new URL(linkUrl).origin;
  return {
    apiOrigin: protocol.apiOrigin,
    token: info.poll.token,
    clientId: info.poll.clientId,
    requestTime: info.poll.requestTime,
    cookies: await cookieHeader(session, request.url, linkUrl),
    origin: header("origin") ?? linkOrigin,
    referer: header("referer") ?? `${linkOrigin}/`,
    userAgent: header("user-agent"),
    language: header("language"),
    expireInSec: info.poll.expireInSec,
  };
}

/** The cookies the browser sends to the API's URL, and the page's bot-management cookie if the API has none. */
async function cookieHeader(session: CDPSession, apiUrl: string, linkUrl: string): Promise<string> {
  const read = async (url: string) => (await session.send("Network.getCookies", { urls: [url] })).cookies;
  const forApi = await read(apiUrl);
  const names = new Set(forApi.map((c) => c.name));
  const extra = names.has(BOT_COOKIE) ? [] : (await read(linkUrl)).filter((c) => c.name === BOT_COOKIE);
  return [...forApi, ...extra].map((c) => `${c.name}=${c.value}`).join("; ");
}
