import { createHash } from "node:crypto";
import type { RequestHandler } from "express";
import { sendError } from "./shim.js";

/**
 * Per-API-key token bucket (429 + Retry-After). Keyed by a hash of the presented key, so it costs no
 * database read and throttles invalid keys too. The bucket lives in the process: with N api instances
 * the effective limit is N × the configured one (docs/decisions.md).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly capacity: number;
  private readonly perMs: number;

  constructor(
    perMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    this.capacity = Math.max(10, Math.ceil(perMinute / 4));
    this.perMs = perMinute / 60_000;
  }

  /** 0 when allowed, otherwise the seconds to wait. */
  take(id: string): number {
    const t = this.now();
    const b = this.buckets.get(id) ?? { tokens: this.capacity, at: t };
    b.tokens = Math.min(this.capacity, b.tokens + (t - b.at) * this.perMs);
    b.at = t;
    this.buckets.set(id, b);
    if (this.buckets.size > 100_000) this.buckets.delete(this.buckets.keys().next().value as string);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perMs / 1000));
  }

  middleware(): RequestHandler {
    return (req, res, next) => {
      const key = req.headers["x-api-key"];
      if (typeof key !== "string" || key === "") return next();
      const wait = this.take(createHash("sha256").update(key).digest("base64url"));
      if (wait === 0) return next();
      res.setHeader("retry-after", String(wait));
      sendError(res, 429, "RATE_LIMITED", `Too many requests for this API key; retry in ${wait} s`);
    };
  }
}
