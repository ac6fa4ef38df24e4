import { setTimeout as sleep } from "node:timers/promises";
import type { UpstreamAnswer } from "../upstreams/http-client.js";

/**
 * What the network's own rules ask of its callers, kept apart from the protocol (network-client.ts): a refused
 * token told once when it starts and once when it ends, an HTTP 429 honoured (Retry-After), single-md5 calls paced,
 * and the run of 403s that means every call is refused. Sources: docs/decisions/0186-network-token-refusal-and-429.md
 * (the token, 429) and docs/decisions/0187-single-md5-rate-cap.md (the single-call rate, the list's 50).
 */

/** The network refuses the token in use: since when, and the call that said so. */
export interface TokenRefusal {
  since: string;
  endpoint: string;
  httpStatus: number;
}

/** The network answered 429: no call before `until`. */
export interface RateLimitPause {
  until: string;
  waitMs: number;
  /** The Retry-After header as sent, or null when there was none. */
  retryAfter: string | null;
  endpoint: string;
}

/** Every call refused with 403 (the single-md5 endpoint among them): since when, and which endpoints. */
export interface Refusal {
  since: string;
  endpoints: string[];
}

/** md5s per check_transaction_by_md5_list call: the network takes at most 50 (decision 0187 gives the sources). */
export const MAX_BATCH_SIZE = 50;
/** The network's errorCode for an unauthorized call (with HTTP 401): decision 0035. */
export const ERROR_UNAUTHORIZED = 6;
/** A 429 without a usable Retry-After pauses this long (as the gateway's 429 pauses a merchant: decision 0112). */
export const RETRY_AFTER_DEFAULT_MS = 60_000;
/** A Retry-After longer than this is cut to it: a typo upstream must not stop payment checks for a day. */
export const RETRY_AFTER_MAX_MS = 600_000;
/** This many 403s in a row, the single-md5 endpoint among them, mean every call is refused. */
const REFUSED_RUN = 3;
/** Each gap between single calls is 1/rate stretched by up to this share, at random: never shorter. */
const JITTER = 0.25;

/** A 401, or the unauthorized errorCode in the network's envelope. */
export function unauthorized(answer: UpstreamAnswer): boolean {
  if (answer.status === 401) return true;
  try {
    const body = JSON.parse(answer.text) as unknown;
    return (
      typeof body === "object" && body !== null && (body as { errorCode?: unknown }).errorCode === ERROR_UNAUTHORIZED
    );
  } catch {
    return false;
  }
}

/**
 * How long a 429 asks us to wait (RFC 9110 §10.2.3: Retry-After is whole seconds or an HTTP date), between 1 s and
 * RETRY_AFTER_MAX_MS; RETRY_AFTER_DEFAULT_MS when the header is absent or unreadable.
 */
export function retryAfterMs(answer: UpstreamAnswer, nowMs: number): number {
  const raw = headerOf(answer, "retry-after");
  let ms = RETRY_AFTER_DEFAULT_MS;
  if (raw !== null && /^\d+$/.test(raw)) ms = Number(raw) * 1000;
  else if (raw !== null && Number.isFinite(Date.parse(raw))) ms = Date.parse(raw) - nowMs;
  return Math.min(Math.max(ms, 1000), RETRY_AFTER_MAX_MS);
}

export function headerOf(answer: UpstreamAnswer, name: string): string | null {
  const value = answer.headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first.trim() === "" ? null : first.trim();
}

/**
 * Single-md5 calls at most `perSecond` a second (per client, so per process): callers take turns, and each starts
 * at least 1/perSecond after the one before actually started, stretched by a random share up to JITTER (so
 * processes started together drift apart, and the rate stays under the cap). Measured from the previous start, not
 * from a slot booked in advance: timers that fire late (a busy event loop) cannot release a burst. Real time, not
 * the service's clock: a test that moves the clock must not open a burst either.
 */
export function pacer(perSecond: number): () => Promise<void> {
  const gapMs = 1000 / perSecond;
  let last = -Infinity;
  let queue: Promise<void> = Promise.resolve();
  return () => {
    const turn = queue.then(async () => {
      const wait = last + gapMs * (1 + Math.random() * JITTER) - performance.now();
      if (wait > 0) await sleep(wait, undefined, { ref: false });
      last = performance.now();
    });
    queue = turn;
    return turn;
  };
}

/**
 * Watches every answer for the token's refusal: told once when a call is refused as unauthorized (the retry with a
 * renewed or replaced token included), and `null` once when a call is answered (HTTP 200, not errorCode 6) again.
 * Other faults (timeouts, 5xx, 403, 429) say nothing about the token, so they neither start nor end a refusal.
 */
export function tokenWatch(
  onTokenRefused: ((refused: TokenRefusal | null) => void) | undefined,
  now: () => number,
): (path: string, answer: UpstreamAnswer) => void {
  let refused: TokenRefusal | null = null;
  return (path, answer) => {
    if (unauthorized(answer)) {
      if (refused !== null) return;
      refused = { since: new Date(now()).toISOString(), endpoint: path, httpStatus: answer.status };
      onTokenRefused?.(refused);
    } else if (answer.status === 200 && refused !== null) {
      refused = null;
      onTokenRefused?.(null);
    }
  };
}

/** Every answer (not connection faults): a run of 403s across endpoints is "every call refused". */
export function refusalWatch(
  onRefused: ((refused: Refusal | null) => void) | undefined,
  now: () => number,
  singlePath: string,
): (path: string, answer: UpstreamAnswer) => void {
  const run = { count: 0, since: 0, endpoints: new Set<string>(), told: false };
  return (path, { status }) => {
    if (status !== 403) {
      if (run.told) onRefused?.(null);
      run.count = 0;
      run.endpoints.clear();
      run.told = false;
      return;
    }
    if (run.count++ === 0) run.since = now();
    run.endpoints.add(path);
    if (!run.told && run.count >= REFUSED_RUN && run.endpoints.has(singlePath)) {
      run.told = true;
      onRefused?.({ since: new Date(run.since).toISOString(), endpoints: [...run.endpoints].sort() });
    }
  };
}
