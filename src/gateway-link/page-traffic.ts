// Reads a payment-link page's own API traffic (answers as the browser received them, held at
// the protocol level while their bodies are read; never the DOM) and turns it into LinkEvents:
// the session (QR + client id) first, then each change of the polled action once. Failing polls
// are counted; a run of them, a page that stops polling, a crashed page or a dead browser ends the
// stream with a fatal error; closing the pool just ends it.

import {
  BrowserPoolError,
  type PageLease,
  type PageRequest,
  type PageResponse,
  type TrafficReader,
} from "./browser.js";
import { EventChannel } from "./event-channel.js";
import {
  isRefusal,
  type LinkAction,
  type LinkCall,
  type LinkPageProtocol,
  type LinkSessionInfo,
} from "./link-protocol.js";
import { classifyRefusal, type PageRefusal } from "./page-refusal.js";
import { isOutageStatus } from "./poll-client.js";

export type LinkEvent =
  | { type: "request_qr" }
  | { type: "scanned" }
  | { type: "approved"; receiptUrl?: string }
  /** The receipt of an approval that came without one (the page keeps polling until it has it). */
  | { type: "receipt"; receiptUrl: string }
  | {
      type: "error";
      message: string;
      fatal: boolean;
      /**
       * The page's site could not be reached or did not answer usably (network errors, HTTP 408, 429 and every
       * 5xx, Cloudflare's 520–524 among them: poll-client.ts isOutageStatus; unreadable answers, no polls): an
       * outage, worth resuming after. False when the page answered a definite refusal for this payment, or our
       * browser went away.
       */
      unavailable?: boolean;
    };

/** An error of the page's traffic that says whether it was an outage (see LinkEvent `unavailable`). */
export class PageTrafficError extends Error {
  constructor(
    message: string,
    readonly unavailable: boolean,
    /** The HTTP status of the answer that failed, when there was one. */
    readonly httpStatus: number | null = null,
    /** What kind of refusal that answer was (a Cloudflare page, or the API's own JSON), when it was one. */
    readonly refusal: PageRefusal | null = null,
    /** The page's API answered and refused to issue a QR (its own status code): the page's reason, not ours. */
    readonly pageRefusal = false,
  ) {
    super(message);
  }
}

export interface WatchOptions {
  /** Consecutive failed polls (HTTP error, network error, unreadable body) that end the session. Default 5. */
  maxConsecutiveFailures?: number;
  /** A page that sends no status poll for this long is considered dead. Default 15 000 ms. */
  stallMs?: number;
}

export class PageTraffic implements TrafficReader {
  readonly events = new EventChannel<LinkEvent>();
  /** Resolves with the QR session, rejects when the page's QR request fails. */
  readonly session: Promise<LinkSessionInfo>;
  private settle!: { resolve: (info: LinkSessionInfo) => void; reject: (err: Error) => void };
  private established = false;
  private finished = false;
  private lastAction: LinkAction | null = null;
  private failures = 0;
  /** Every failure of the current run was an outage (see `unavailable`). */
  private runUnavailable = true;
  private stallTimer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private readonly maxFailures: number;
  private readonly stallMs: number;
  private lease: PageLease | null = null;
  private readonly receiptOrigins: readonly string[];
  private receiptDropped = false;
  /** Unknown actions already told (a page repeats its action in every poll). */
  private readonly unknownActions = new Set<string>();
  /** The page's request whose answer gave the session (its headers are what a poll without the page repeats). */
  sessionRequest: (PageRequest & { url: string }) | null = null;

  /** Give it to BrowserPool.acquire() as `traffic`, then bind() the lease it gets. */
  constructor(
    private readonly protocol: LinkPageProtocol,
    private readonly origin: string,
    watch: WatchOptions,
    /** Told of a receipt URL that was dropped (not on the page's or its API's origin). */
    private readonly onWarning: (message: string) => void = () => undefined,
  ) {
    // A page whose API is elsewhere gives its receipts there (PayWay's download-receipt is on its API's origin).
    this.receiptOrigins = protocol.apiOrigin === undefined ? [] : [protocol.apiOrigin];
    this.maxFailures = watch.maxConsecutiveFailures ?? 5;
    this.stallMs = watch.stallMs ?? 15_000;
    this.session = new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    this.session.catch(() => undefined); // the opener may have failed first and never read it
  }

  /** The page this traffic is read from: its loss ends the stream, and the stream's end releases it. */
  bind(lease: PageLease): void {
    this.lease = lease;
    if (this.finished) {
      void lease.release();
      return;
    }
    lease.signal.addEventListener("abort", this.onLeaseLost, { once: true });
    if (lease.signal.aborted) this.onLeaseLost();
  }

  /** Ends the stream without an error and releases the page. Idempotent. */
  async close(): Promise<void> {
    this.finish();
    await this.lease?.release();
  }

  wants(url: string): boolean {
    return this.classify(url) !== null;
  }

  onResponse(response: PageResponse): void {
    const call = this.classify(response.url);
    if (!call) return;
    // The chain keeps the events in the order the page saw them.
    this.chain = this.chain
      .then(() =>
        response.status === null
          ? this.callFailed(call, `network error on ${call}: ${response.errorText ?? "unknown"}`, true)
          : this.handle(call, response.status, response),
      )
      .catch(() => undefined);
  }

  private readonly onLeaseLost = (): void => {
    const reason: unknown = this.lease?.signal.reason;
    // A pool closed on purpose (process shutdown) interrupts the session; it did not fail.
    // The stream just ends, as after close(), and another worker can resume the payment.
    if (reason instanceof BrowserPoolError && reason.code === "POOL_CLOSED") {
      this.finish();
      return;
    }
    this.fatal(reason instanceof Error ? reason.message : "the browser page went away");
  };

  private classify(rawUrl: string): LinkCall | null {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return null;
    }
    const ours = url.origin === this.origin || url.origin === this.protocol.apiOrigin;
    return ours ? this.protocol.classify(url) : null;
  }

  private handle(call: LinkCall, httpStatus: number, response: PageResponse): void {
    if (this.finished) return;
    // An answer over the cap (answer-body.ts) was refused unread: unusable, like one that is not JSON.
    if (response.body === null && response.errorText !== null)
      return this.callFailed(call, `${call}: ${response.errorText}`, true);
    const text = response.body;
    let body: unknown;
    try {
      body = text === null ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (httpStatus < 200 || httpStatus > 299) {
      const refusal = classifyRefusal({ status: httpStatus, headers: response.headers, body: text });
      const said = refusal === null ? errorText(body, text) : `: ${refusal.detail.replace(/^HTTP \d+: /, "")}`;
      return this.callFailed(
        call,
        `${call} answered HTTP ${httpStatus}${said}`,
        // The same statuses the worker's own polls wait out: a page is never failed for a 500 or a 52x either
        // (docs/decisions/0189-link-outages-never-fail-a-payment.md).
        isOutageStatus(httpStatus),
        httpStatus,
        refusal,
      );
    }
    if (call === "status") {
      const status = this.protocol.parseStatus(body);
      if (!status) return this.callFailed(call, "unreadable status answer", true);
      this.failures = 0;
      this.runUnavailable = true;
      this.armStall();
      if ("pending" in status) return this.unknownAction(status.pending);
      return this.report(status.action, status.receiptUrl);
    }
    if (this.established) return; // a second session answer (e.g. a reload) changes nothing
    const info = this.protocol.parseSession(body, response.request);
    if (!info) return this.callFailed(call, `unreadable ${call} answer`, true);
    // The page's API answered and refused this payment: nothing to wait out.
    if (isRefusal(info)) return this.callFailed(call, info.refusal, false, null, null, true);
    this.established = true;
    this.sessionRequest = { ...response.request, url: response.url };
    this.settle.resolve(info);
    this.armStall();
    if (call === "request_qr") this.report("request_qr");
  }

  private callFailed(
    call: LinkCall,
    reason: string,
    unavailable: boolean,
    httpStatus: number | null = null,
    refusal: PageRefusal | null = null,
    pageRefusal = false,
  ): void {
    if (this.finished) return;
    if (!this.established) {
      if (call !== "status")
        this.settle.reject(new PageTrafficError(reason, unavailable, httpStatus, refusal, pageRefusal));
      return;
    }
    this.failures += 1;
    this.runUnavailable &&= unavailable;
    this.armStall();
    if (this.failures >= this.maxFailures)
      this.fatal(`the payment page's API failed ${this.failures} times in a row; last: ${reason}`, this.runUnavailable);
    else if (this.failures === 1) this.events.push({ type: "error", message: reason, fatal: false });
  }

  /** An action the adapter does not know: the page still waits; said once per action, no change reported. */
  private unknownAction(action: string): void {
    // Bounded: a page that invents a new word per poll is told about a few times, not once per poll.
    if (this.unknownActions.has(action) || this.unknownActions.size >= 4) return;
    this.unknownActions.add(action);
    const shown = action.length > 60 ? `${action.slice(0, 60)}…` : action;
    this.onWarning(
      `the payment page reported an action public code does not show (${JSON.stringify(shown)}): treated as pending`,
    );
  }

  private report(action: LinkAction, reported?: string): void {
    const receiptUrl =
      reported === undefined ? undefined : (acceptableReceipt(reported, this.origin, this.receiptOrigins) ?? undefined);
    if (reported !== undefined && receiptUrl === undefined && !this.receiptDropped) {
      this.receiptDropped = true; // once: the page repeats it in every poll after the approval
      this.onWarning(droppedReceipt(reported));
    }
    if (action === this.lastAction) {
      // Approved without a receipt: the receipt arrives in a later poll, which ends the session.
      if (action === "approved" && receiptUrl) {
        this.events.push({ type: "receipt", receiptUrl });
        this.finish();
        void this.lease?.release();
      }
      return;
    }
    this.lastAction = action;
    if (action === "approved") {
      this.events.push({ type: "approved", ...(receiptUrl ? { receiptUrl } : {}) });
      if (receiptUrl) {
        this.finish();
        void this.lease?.release();
      }
    } else {
      this.events.push({ type: action });
    }
  }

  private fatal(message: string, unavailable = false): void {
    if (this.finished) return;
    this.settle.reject(new PageTrafficError(message, unavailable));
    if (this.established) this.events.push({ type: "error", message, fatal: true, unavailable });
    this.finish();
    void this.lease?.release();
  }

  private armStall(): void {
    clearTimeout(this.stallTimer);
    this.stallTimer = setTimeout(
      () => this.fatal(`the payment page sent no status poll for ${this.stallMs} ms`, true),
      this.stallMs,
    );
    this.stallTimer.unref();
  }

  /** Stops listening and ends the stream; buffered events are still delivered. */
  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.stallTimer);
    this.lease?.signal.removeEventListener("abort", this.onLeaseLost);
    this.events.end();
  }
}

/** What an error answer says: `error.message` (our simulator), `status.message` or `message` (PayWay), or a block page. */
function errorText(body: unknown, raw: string | null): string {
  if (typeof body !== "object" || body === null) {
    return raw !== null && /cloudflare/i.test(raw) ? ": a Cloudflare block page" : "";
  }
  for (const holder of ["error", "status"] as const) {
    const inner = (body as Record<string, unknown>)[holder];
    if (typeof inner === "object" && inner !== null && "message" in inner && typeof inner.message === "string")
      return `: ${inner.message}`;
  }
  return "message" in body && typeof body.message === "string" ? `: ${body.message}` : "";
}

/**
 * A receipt URL read from a third-party page is stored, sent to merchants and rendered: it is kept only as
 * an absolute https: URL on the link's own origin or its API's (`allowedOrigins`: PayWay's, whose
 * download-receipt is there); http: only when the link itself is http:, i.e. the demo's simulator. Anything
 * else (javascript:, data:, another site, a CDN the page may load from) is dropped, and the payment is still
 * approved (docs/decisions/0170-a-link-page-cannot-vouch-for-itself.md).
 */
export function acceptableReceipt(
  raw: string,
  linkOrigin: string,
  allowedOrigins: readonly string[] = [],
): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  const link = new URL(linkOrigin);
  if (u.protocol !== "https:" && !(u.protocol === "http:" && link.protocol === "http:")) return null;
  return u.origin === link.origin || allowedOrigins.includes(u.origin) ? u.toString() : null;
}

/** The warning logged for a receipt URL that was dropped (the URL cut short: it is someone else's text). */
export function droppedReceipt(raw: string): string {
  const shown = raw.length > 200 ? `${raw.slice(0, 200)}…` : raw;
  return `receipt URL dropped (not on the payment page's or its API's origin): ${JSON.stringify(shown)}`;
}
