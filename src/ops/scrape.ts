import type { Request, RequestHandler } from "express";
import type { BearerThrottle } from "../auth/bearer-throttle.js";
import { throttledMessage, throttleKey } from "../auth/bearer-throttle.js";
import { credentialsFromHeaders } from "../auth/credentials.js";
import { RateLimiter } from "../auth/rate-limit.js";
import type { Metrics } from "./metrics.js";

/**
 * Scrapes per client address per minute; a burst of a quarter of it (RateLimiter). A scraper asks every 15–60 s;
 * this leaves room for several scrapers behind one address and stops a loop from rendering the registry without
 * end (docs/decisions/0169-throttles-spare-the-innocent.md).
 */
export const SCRAPES_PER_MINUTE = 120;

export interface ScrapeDeps {
  metrics: Metrics;
  /**
   * The bearer tokens that may scrape (the public port: METRICS_TOKEN or the admin token), or null where the
   * listener itself is the protection (the operator listener): then no token is asked for, nor judged.
   */
  accepts: ((token: string) => boolean) | null;
  /** The failed-credential budget: a wrong token here counts, and a throttled address is refused unchecked. */
  throttle: Pick<BearerThrottle, "blockedFor" | "fail">;
  /** Who a request comes from (src/auth/client-address.ts). */
  addressOf: (req: Request) => string;
  now?: () => number;
}

const error = (code: string, message: string) => ({ error: { code, message, details: [] } });

/**
 * GET /metrics with a budget of its own. It judges its own tokens (the HTTP edge's bearer throttle skips this
 * path), so a right scrape never reaches the failed-credential budget: METRICS_TOKEN is no admin or client token,
 * and that budget counted each scrape with it as a failure, so the 11th scrape in a minute locked the admin token
 * out of that address. Right scrapes are charged to their own bucket per address instead.
 */
export function scrapeRoute(deps: ScrapeDeps): RequestHandler {
  const scrapes = new RateLimiter(SCRAPES_PER_MINUTE, deps.now);
  return (req, res, next) => {
    const address = deps.addressOf(req);
    if (deps.accepts !== null) {
      const token = credentialsFromHeaders(req.headers).bearer ?? "";
      const wait = token === "" ? 0 : deps.throttle.blockedFor(address);
      if (wait > 0) {
        res.setHeader("retry-after", String(wait));
        return void res.status(429).json(error("RATE_LIMITED", throttledMessage(wait)));
      }
      if (token === "" || !deps.accepts(token)) {
        if (token !== "") deps.throttle.fail(address);
        res.setHeader("www-authenticate", 'Bearer realm="metrics"');
        const message = "/metrics needs Authorization: Bearer <METRICS_TOKEN or ADMIN_TOKEN>";
        return void res.status(401).json(error("UNAUTHENTICATED", message));
      }
    }
    const wait = scrapes.take(`metrics:${throttleKey(address)}`);
    if (wait > 0) {
      res.setHeader("retry-after", String(wait));
      return void res
        .status(429)
        .json(error("RATE_LIMITED", `Too many scrapes of /metrics from this address; retry in ${wait} s`));
    }
    res.setHeader("content-type", deps.metrics.registry.contentType);
    res.setHeader("cache-control", "no-store");
    deps.metrics.registry.metrics().then((text) => void res.send(text), next);
  };
}
