// What a worker needs to poll a payment's status without its page, taken from the page that issued the QR:
// the parts of the QR answer (token, client id, request_time), the headers the page's own request carried
// and the cookies the browser holds for the API's origin, as it would send them there. Never the page's own: a
// browser does not send link.payway.com.kh's cookies to pwapp.ababank.com, and public pollers send no cookie at
// all (Eavheang/payway-merchant, meas-ravy/payluy-backend; docs/decisions/0206-the-poll-carries-the-api-origins-cookies.md).

import type { CDPSession } from "puppeteer-core";
import type { LinkPageProtocol, LinkPollSession, LinkSessionInfo } from "./link-protocol.js";
import { PageTrafficError, type PageTraffic } from "./page-traffic.js";

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
    cookies: await cookieHeader(session, request.url),
    origin: header("origin") ?? linkOrigin,
    referer: header("referer") ?? `${linkOrigin}/`,
    userAgent: header("user-agent"),
    language: header("language"),
    expireInSec: info.poll.expireInSec,
  };
}

/** The cookies the browser holds for the API's URL (its own `__cf_bm`, if it set one), as a Cookie header. */
async function cookieHeader(session: CDPSession, apiUrl: string): Promise<string> {
  const { cookies } = await session.send("Network.getCookies", { urls: [apiUrl] });
  return cookies.map((c) => `${c.name}=${c.value}`).join("; ");
}
