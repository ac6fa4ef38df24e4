// How the status polls of PayWay payments are paced (pure: the caller gives the time): each interval jittered by
// ±10 %, the late watch's cadence after EXPIRED, and one gate per worker that caps polls per second and holds them
// back after a 429 for as long as its Retry-After asks. Why: docs/decisions/0188-link-late-watch-for-the-qrs-life.md
// (the cadence), docs/decisions/0190-polite-link-polls.md (jitter, 429, rate cap) and
// docs/decisions/0262-a-429-in-the-same-breath.md (the 429 of a poll that was already out).

/** Every interval is stretched or shrunk by up to this share, at random (a public poller adds ±200 ms to 3 s). */
export const JITTER = 0.1;
/** The first hour after expiry: about one poll a minute (public pollers watch for an hour). */
export const LATE_FIRST_HOUR_MS = 3600_000;
export const LATE_EARLY_MAX_MS = 60_000;
/** After the first hour: one poll every 10 minutes, until LINK_LATE_WATCH_MS. */
export const LATE_SLOW_MS = 600_000;
/** A Retry-After longer than this is cut to it: a typo upstream must not stop every poll for a day. */
export const RETRY_AFTER_MAX_MS = 600_000;
/** A 429 without a usable Retry-After: this long, doubled for each further 429 in a row, up to a minute. */
export const BACKOFF_FIRST_MS = 5_000;
export const BACKOFF_MAX_MS = 60_000;

/** `ms` ± 10 % at random: polls of many payments (and of many workers) never line up on one period. */
export function jittered(ms: number, random: () => number = Math.random): number {
  return ms * (1 - JITTER + 2 * JITTER * random());
}

/**
 * The gap before the next poll of an expired payment, `sinceExpiryMs` after its expiry: a quarter of the time since
 * expiry between the page's cadence and a minute (an approval just after the 180 s is the likeliest: the payer was
 * at it), a minute up to the first hour, then ten minutes. Unjittered: the caller jitters it.
 */
export function lateGapMs(sinceExpiryMs: number, intervalMs: number): number {
  if (sinceExpiryMs >= LATE_FIRST_HOUR_MS) return LATE_SLOW_MS;
  return Math.min(LATE_EARLY_MAX_MS, Math.max(intervalMs, sinceExpiryMs / 4));
}

/**
 * How long a 429 asks us to wait: Retry-After in whole seconds or as an HTTP date (RFC 9110 §10.2.3), between 1 s
 * and RETRY_AFTER_MAX_MS; null when the header is absent or unreadable.
 */
export function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (header === null) return null;
  const raw = header.trim();
  let ms: number;
  if (/^\d+$/.test(raw)) ms = Number(raw) * 1000;
  else if (Number.isFinite(Date.parse(raw))) ms = Date.parse(raw) - nowMs;
  else return null;
  return Math.min(Math.max(ms, 1000), RETRY_AFTER_MAX_MS);
}

/**
 * One per worker, in front of every status poll. `reserve()` books the next slot (at most `perSecond` a second, a
 * burst of a tenth of a second's worth after a quiet spell) and says how long to wait for it; slots are given in
 * the order asked, so nobody starves. A 429 holds every slot back until its Retry-After has passed (the limit is the
 * caller address's, not one payment's); without one, 5 s doubling per 429 in a row, up to a minute.
 */
export class PollGate {
  private readonly gapMs: number;
  private readonly burstMs: number;
  /** When the slot after the last one booked is (ms, the caller's time base). */
  private tat = -Infinity;
  private pausedUntil = -Infinity;
  /** When the hold now running (or the last one) began. */
  private pausedFrom = -Infinity;
  private tooMany = 0;
  /** How many 429s were answered, and the pause they caused (stats). */
  rateLimited = 0;

  constructor(
    perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.gapMs = 1000 / perSecond;
    this.burstMs = Math.max(this.gapMs, this.gapMs * Math.floor(perSecond / 10));
  }

  /** Books a slot for one poll: the ms to wait before sending it (0: now). */
  reserve(): number {
    const now = this.now();
    const earliest = Math.max(now, this.pausedUntil);
    this.tat = Math.max(this.tat, earliest);
    const start = Math.max(earliest, this.tat - this.burstMs);
    this.tat += this.gapMs;
    return start - now;
  }

  /** How many more polls could start within `horizonMs` from now (what is left for late polls). */
  spare(horizonMs: number): number {
    const now = this.now();
    const earliest = Math.max(now, this.pausedUntil);
    if (earliest > now + horizonMs) return 0;
    const tat = Math.max(this.tat, earliest);
    return Math.max(0, Math.floor((now + horizonMs + this.burstMs - tat) / this.gapMs));
  }

  /** Now, on the gate's clock: what a poll notes as it goes out, to give `pause` with its 429. */
  stamp(): number {
    return this.now();
  }

  /**
   * An HTTP 429: no poll before its Retry-After (ms, or null when it gave none) has passed. `sentAt` (the poll's
   * `stamp()`): a poll that went out before the hold now running began was refused in the same breath as the 429
   * that began it, so it neither doubles the backoff nor lengthens the hold (a Retry-After it names still counts).
   */
  pause(retryAfter: number | null, sentAt = Infinity): number {
    this.rateLimited++;
    if (sentAt < this.pausedFrom && this.pausedUntil > this.now()) {
      if (retryAfter !== null) this.pausedUntil = Math.max(this.pausedUntil, this.now() + retryAfter);
      return this.pausedUntil - this.now();
    }
    this.tooMany++;
    const waitMs = retryAfter ?? Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (this.tooMany - 1));
    this.pausedFrom = this.now();
    this.pausedUntil = Math.max(this.pausedUntil, this.pausedFrom + waitMs);
    return waitMs;
  }

  /** Any answer other than a 429: the next 429 without Retry-After starts from 5 s again. */
  answered(): void {
    this.tooMany = 0;
  }

  /** Until when (ms, the caller's time base) polls are held back by a 429, or null. */
  get heldUntil(): number | null {
    return this.pausedUntil > this.now() ? this.pausedUntil : null;
  }

  /** How long polls are still held back by a 429 (ms; 0: not held). */
  heldForMs(): number {
    return Math.max(0, this.pausedUntil - this.now());
  }
}
