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
 * so even the right admin token is refused and guessing at network speed learns nothing. One exception: a
 * valid client token is still accepted (docs/decisions/0169-throttles-spare-the-innocent.md). A client token
 * carries a 256-bit HMAC, which no rate of guessing finds, and every shopper behind one NAT or proxy shares an
 * address: refusing it would let one sender of bogus tokens stop every checkout page there. A correct token
 * never counts; requests without a bearer token are not affected (API keys have their own rate limit).
 */
export class BearerThrottle {
  private readonly failures = new Map<string, { count: number; until: number }>();

  constructor(
    private readonly judge: {
      isAdminToken(token: string): boolean;
      /** A client token that is valid now (signature, expiry, its key active). */
      isClientToken(token: string): boolean | Promise<boolean>;
    },
    private readonly opts: {
      maxFailures: number;
      windowMs: number;
      now?: () => number;
      /** Who a request comes from (src/auth/client-address.ts); the TCP peer when not given. */
      addressOf?: (req: Request) => string;
    } = { maxFailures: 10, windowMs: 60_000 },
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

  /**
   * Seconds until `token` from `address` may be judged, or 0. While the address is throttled only a valid client
   * token gets through; anything else, the admin token included, is refused without being compared to it.
   */
  async refusal(address: string, token: string): Promise<number> {
    const wait = this.blockedFor(address);
    if (wait === 0) return 0;
    return (await this.judge.isClientToken(token)) ? 0 : wait;
  }

  /** Whether `token` is a credential this throttle protects and it is right (the admin token, a client token). */
  private async isValid(token: string): Promise<boolean> {
    return this.judge.isAdminToken(token) || (await this.judge.isClientToken(token));
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
      const address = this.opts.addressOf?.(req) ?? req.socket.remoteAddress ?? "unknown";
      const judged = async () => {
        const wait = this.blockedFor(address);
        if (wait > 0 && !(await this.judge.isClientToken(token))) {
          res.setHeader("retry-after", String(wait));
          res.status(429).json({ error: { code: "RATE_LIMITED", message: throttledMessage(wait), details: [] } });
          return;
        }
        // Throttled but a valid client token: on, without comparing it to the admin token.
        if (wait === 0 && token !== "" && !(await this.isValid(token))) this.fail(address);
        next();
      };
      judged().catch(next);
    };
  }
}
