import type { NextFunction, Request, Response } from "express";
import { credentialsFromHeaders } from "./credentials.js";

/**
 * Failed `Authorization: Bearer` attempts per client address (issue 16): after `maxFailures` wrong tokens
 * within `windowMs`, every bearer request from that address answers 429 with `retry-after` until the window
 * ends, so the admin token cannot be guessed at network speed. A correct token never counts; requests
 * without a bearer token are not affected (API keys have their own rate limit).
 */
export class BearerThrottle {
  private readonly failures = new Map<string, { count: number; until: number }>();

  constructor(
    private readonly isValid: (token: string) => boolean | Promise<boolean>,
    private readonly opts: { maxFailures: number; windowMs: number; now?: () => number } = {
      maxFailures: 10,
      windowMs: 60_000,
    },
  ) {}

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  /** Seconds until `address` may try again, or 0. */
  blockedFor(address: string): number {
    const f = this.failures.get(address);
    if (f === undefined) return 0;
    const left = f.until - this.now();
    if (left <= 0) {
      this.failures.delete(address);
      return 0;
    }
    return f.count >= this.opts.maxFailures ? Math.ceil(left / 1000) : 0;
  }

  fail(address: string): void {
    const now = this.now();
    const f = this.failures.get(address);
    if (f === undefined || f.until <= now) {
      // Bounded memory: under a flood from many addresses, drop the expired entries first.
      if (this.failures.size >= 100_000)
        for (const [k, v] of this.failures)
          if (v.until <= now || this.failures.size >= 100_000) this.failures.delete(k);
      this.failures.set(address, { count: 1, until: now + this.opts.windowMs });
    } else f.count++;
  }

  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      // The same reading of the header as authentication's (src/auth/credentials.ts).
      const token = credentialsFromHeaders(req.headers).bearer;
      if (token === undefined) return next();
      const address = req.socket.remoteAddress ?? "unknown";
      const wait = this.blockedFor(address);
      if (wait > 0) {
        res.setHeader("retry-after", String(wait));
        res.status(429).json({
          error: {
            code: "RATE_LIMITED",
            message: `Too many failed bearer tokens from this address; retry in ${wait} s`,
            details: [],
          },
        });
        return;
      }
      if (token === "") return next();
      Promise.resolve(this.isValid(token)).then((valid) => {
        if (!valid) this.fail(address);
        next();
      }, next);
    };
  }
}
