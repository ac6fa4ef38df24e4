import type { Principal } from "./principal.js";

/**
 * Token bucket per caller (429 + Retry-After). One limiter serves HTTP (REST and /graphql) and every
 * websocket operation, keyed on the resolved principal (never on the raw header: two spellings of one key
 * share one bucket). The bucket lives in the process: with N api instances the effective limit is N × the
 * configured one (docs/decisions/0033-rate-limit-per-key-per-process.md,
 * docs/decisions/0131-one-limiter-on-the-resolved-principal.md).
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
}

/**
 * The bucket of a caller: a key by its id, a client token by its transaction, the operator as one, and a
 * caller without valid credentials by its address (so guessing keys is throttled too).
 */
export function bucketOf(p: Principal, ip: string | undefined): string {
  switch (p.type) {
    case "key":
      return `key:${p.keyId}`;
    case "client":
      return `client:${p.transactionId}`;
    case "admin":
      return "admin";
    default:
      return `ip:${ip ?? "unknown"}`;
  }
}

export function rateLimitedMessage(wait: number): string {
  return `Too many requests for this credential; retry in ${wait} s`;
}
