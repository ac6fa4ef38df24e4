import type { NextFunction, Request, Response } from "express";
import ipaddr from "ipaddr.js";
import { credentialsFromHeaders } from "./credentials.js";

/**
 * The budget a client address is charged in: an IPv4 address (IPv4-mapped IPv6 included, so a dual-stack
 * listener and an IPv4 one agree), or an IPv6 address's /64, which one subscriber usually holds whole: per
 * address, it would give a guesser 2^64 fresh budgets.
 */
export function throttleKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === "ipv4") return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}

/** What every channel answers while an address is throttled (HTTP 429's message, the websocket's close reason). */
export function throttledMessage(seconds: number): string {
  return `Too many failed credentials from this address; retry in ${seconds} s`;
}

/**
 * Failed admin-token (and client-token) attempts per client address, one budget for every channel (issue 16,
 * and the websocket finding after it): HTTP bearer tokens on the public port and on the operator listener,
 * and graphql-ws `connection_init` credentials, all count here. After `maxFailures` wrong tokens within
 * `windowMs`, each channel refuses that address's credentials until the window ends — without checking them,
 * so even the right token is refused and guessing at network speed learns nothing. A correct token never
 * counts; requests without a bearer token are not affected (API keys have their own rate limit).
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

  /** Seconds until `address` may present a credential again, or 0. */
  blockedFor(address: string): number {
    const key = throttleKey(address);
    const f = this.failures.get(key);
    if (f === undefined) return 0;
    const left = f.until - this.now();
    if (left <= 0) {
      this.failures.delete(key);
      return 0;
    }
    return f.count >= this.opts.maxFailures ? Math.ceil(left / 1000) : 0;
  }

  /** One wrong credential from `address`, on any channel. */
  fail(address: string): void {
    const key = throttleKey(address);
    const now = this.now();
    const f = this.failures.get(key);
    if (f === undefined || f.until <= now) {
      // Bounded memory: under a flood from many addresses, drop the expired entries first.
      if (this.failures.size >= 100_000)
        for (const [k, v] of this.failures)
          if (v.until <= now || this.failures.size >= 100_000) this.failures.delete(k);
      this.failures.set(key, { count: 1, until: now + this.opts.windowMs });
    } else f.count++;
  }

  /** The HTTP channel: a request with a bearer token from a throttled address answers 429 + retry-after. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      // The same reading of the header as authentication's (src/auth/credentials.ts).
      const token = credentialsFromHeaders(req.headers).bearer;
      if (token === undefined) return next();
      const address = req.socket.remoteAddress ?? "unknown";
      const wait = this.blockedFor(address);
      if (wait > 0) {
        res.setHeader("retry-after", String(wait));
        res.status(429).json({ error: { code: "RATE_LIMITED", message: throttledMessage(wait), details: [] } });
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
