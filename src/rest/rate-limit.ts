import type { Request, RequestHandler } from "express";
import type { Principal } from "../auth/principal.js";
import { bucketOf, rateLimitedMessage, type RateLimiter } from "../auth/rate-limit.js";
import { sendError } from "./shim.js";

export { RateLimiter } from "../auth/rate-limit.js";

/**
 * The HTTP side of the one limiter (src/auth/rate-limit.ts): the request's credentials are resolved first
 * (through the key cache: no database read for a known key), and the principal's bucket is charged.
 */
export function rateLimitMiddleware(
  limiter: RateLimiter,
  resolve: (headers: Record<string, string | string[] | undefined>) => Promise<Principal>,
  /** Who a request comes from (src/auth/client-address.ts): the bucket of a caller without credentials. */
  addressOf: (req: Request) => string = (req) => req.socket.remoteAddress ?? "unknown",
): RequestHandler {
  return (req, res, next) => {
    resolve(req.headers).then((principal) => {
      const wait = limiter.take(bucketOf(principal, addressOf(req)));
      if (wait === 0) return next();
      res.setHeader("retry-after", String(wait));
      sendError(res, 429, "RATE_LIMITED", rateLimitedMessage(wait));
    }, next);
  };
}
