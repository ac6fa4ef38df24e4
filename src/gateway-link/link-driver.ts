// Drives a merchant's hosted payment-link page in a leased browser page: opens the configured
// URL, asks for a KHQR as a visitor would, and reads the QR and what its status poll needs from the page's own API
// traffic; then the page is closed. It knows nothing of transactions or the 180-second limit; the watch does.

import type { CDPSession } from "puppeteer-core";
import { resolvesAllowed, type EgressPolicy } from "../upstreams/egress.js";
import { BrowserPoolError, type AcquireOptions, type BrowserPool, type PageLease } from "./browser.js";
import { PageTraffic, PageTrafficError, type WatchOptions } from "./page-traffic.js";
import { isOutageStatus } from "./poll-client.js";
import type {
  LinkPageProtocol,
  LinkPollSession,
  LinkSessionInfo,
  PageCheck,
  PageVerdict,
  PayerField,
  PayerFields,
  VisitorForm,
} from "./link-protocol.js";
import { fillAmount, fillField, MissingElementError, pressContinue } from "./page-form.js";
import type { FieldError } from "../errors.js";
import { compareDecimals, decimalText, moneyText, NUMERIC_TO_CODE } from "../money/money.js";
import { pollSessionOf } from "./poll-seed.js";
import { classifyRefusal, type PageRefusal } from "./page-refusal.js";

export type { WatchOptions };

/** invalid_input: the request does not fit the link (its fixed amount, its bounds, a field it requires): `invalid`. */
export type LinkDriverErrorKind = "timeout" | "page_error" | "browser_error" | "invalid_input";

export class LinkDriverError extends Error {
  override readonly name = "LinkDriverError";
  /**
   * The page's site was unreachable or did not answer usably (timeouts, network errors, HTTP
   * 429/502/503/504, unreadable answers): an outage to wait out, not a failure of this payment.
   */
  readonly unavailable: boolean;
  /** The HTTP status the page or its API refused with, when that is what happened (403: see LinkRefusals). */
  readonly httpStatus: number | null;
  /**
   * What kind of refusal it was (the provider's edge, or the API refusing the request's data), when it was one, and
   * what refused: the page's document, or its API's answer to the page's QR request.
   */
  readonly refusal: (PageRefusal & { by: "page" | "api" }) | null;
  /** invalid_input: what of the request the link refuses, by the request's field names (a 400's details). */
  readonly invalid: readonly FieldError[];
  constructor(
    readonly kind: LinkDriverErrorKind,
    message: string,
    options?: {
      cause?: unknown;
      unavailable?: boolean;
      httpStatus?: number | null;
      refusal?: (PageRefusal & { by: "page" | "api" }) | null;
      invalid?: readonly FieldError[];
    },
  ) {
    super(message, options);
    this.unavailable = options?.unavailable ?? kind === "timeout";
    this.httpStatus = options?.httpStatus ?? null;
    this.refusal = options?.refusal ?? null;
    this.invalid = options?.invalid ?? [];
  }
}

/** The request does not fit the link: nothing was asked of the page's API, so nothing is to be stored. */
function invalidInput(invalid: readonly FieldError[]): LinkDriverError {
  const what = invalid.map((d) => `${d.field} ${d.message}`).join("; ");
  return new LinkDriverError("invalid_input", `the payment link refuses the request: ${what}`, { invalid });
}

export interface LinkSession {
  readonly qr: string;
  readonly clientId: string;
  /** Opens the payer's banking app on this QR, when the protocol makes one. */
  readonly deeplink?: string;
  /** The page is closed already: the worker polls the page's API with this (link-watch.ts). */
  readonly poll: LinkPollSession;
}

interface CommonOptions {
  /** The configured payment-link URL; the driver never navigates anywhere else. */
  url: string;
  /** Bound on everything up to the QR: waiting for a page, loading, typing, the API answer. */
  timeoutMs: number;
  /** How the page is driven and read (the configuration's adapter; never a silent default). */
  protocol: LinkPageProtocol;
  /**
   * Where the page may be (upstreams/egress.ts): its name is resolved and checked before each opening.
   * The service always passes its policy; the driver's own tests on loopback pages leave it out.
   */
  egress?: EgressPolicy;
  /**
   * Origins (scheme://host:port) the page may load from besides its own (LINK_ALLOWED_ORIGINS): a payment
   * page's CDN, say. Every other request of the page is failed inside Chromium. (A receipt URL is kept only on
   * the page's origin or its API's: page-traffic.ts.)
   */
  allowedOrigins?: readonly string[];
  watch?: WatchOptions;
  /**
   * Told what the page showed that an adapter built on partial knowledge did not expect, and of a receipt URL
   * dropped for its origin (logged above).
   */
  onWarning?: (message: string) => void;
  /** Whose page, for the pool's fair shares (AcquireOptions.share). */
  share?: AcquireOptions["share"];
}

export interface OpenLinkOptions extends CommonOptions {
  /** Decimal string as the visitor types it, e.g. "12.50". */
  amount: string;
  currency: 116 | 840;
  /** The generate request's optional fields, for a page that asks for more than the amount. */
  payer?: PayerFields;
}

/** Whether two amount texts are one amount ("12.5" is "12.50"); a text that is no decimal matches nothing. */
function sameAmount(a: string, b: string): boolean {
  const x = decimalText(a);
  const y = decimalText(b);
  return x !== null && y !== null && compareDecimals(x, y) === 0;
}

export function openLinkSession(pool: BrowserPool, options: OpenLinkOptions): Promise<LinkSession> {
  return startSession(pool, options, {
    async interact(session, protocol, remainingMs) {
      const verdict = protocol.pageCheck ? await checkPage(session, protocol.pageCheck, options) : {};
      return fillAsVisitor(session, protocol.form, verdict, options, remainingMs);
    },
    verify(info) {
      if (info.currency !== undefined && info.currency !== options.currency) {
        return `the payment page issued a QR in currency ${info.currency}, configured ${options.currency}`;
      }
      if (info.amount !== undefined && !sameAmount(info.amount, options.amount)) {
        return `the payment page issued a QR for ${info.amount}, asked ${options.amount}`;
      }
      return null;
    },
  });
}

/**
 * What the page's own state says before anything is typed: a refusal fails the opening, a request that does not
 * fit the link is refused (nothing asked of the page's API), a warning is told; the verdict says how to fill it.
 */
async function checkPage(session: CDPSession, check: PageCheck, options: OpenLinkOptions): Promise<PageVerdict> {
  const { result, exceptionDetails } = await session.send("Runtime.evaluate", {
    expression: check.expression,
    returnByValue: true,
  });
  const verdict = check.verify(exceptionDetails ? null : result.value, {
    amount: options.amount,
    currency: options.currency,
    ...(options.payer === undefined ? {} : { payer: options.payer }),
  });
  if (verdict.refusal !== undefined) throw new LinkDriverError("page_error", verdict.refusal);
  if (verdict.invalid !== undefined && verdict.invalid.length > 0) throw invalidInput(verdict.invalid);
  if (verdict.warning !== undefined) options.onWarning?.(verdict.warning);
  return verdict;
}

/**
 * The form as a visitor fills it once the page has hydrated (page-form.ts): the amount (unless the link fixes it),
 * the extra fields the link asks for, then Continue once it is enabled. A field showing another fixed amount than
 * the request's is the caller's error, as the page's state saying so is.
 */
async function fillAsVisitor(
  session: CDPSession,
  form: VisitorForm,
  verdict: PageVerdict,
  options: OpenLinkOptions,
  remainingMs: () => number,
): Promise<void> {
  if (verdict.fixedAmount === undefined) {
    const shown = await fillAmount(session, form.amountWords, options.amount, remainingMs()).catch(pageError);
    if (shown.kind === "fixed") {
      const fixed = decimalText(shown.value);
      if (fixed === null || compareDecimals(fixed, options.amount) !== 0) {
        const shownAs = fixed === null ? shown.value : moneyText(fixed, NUMERIC_TO_CODE[options.currency] as string);
        throw invalidInput([{ field: "amount", message: `must be ${shownAs}, the payment link's fixed amount` }]);
      }
    }
  }
  for (const { field, value } of verdict.fill ?? [])
    await fillField(session, form.fields[field], value, FIELD_NAMES[field], remainingMs()).catch(pageError);
  await pressContinue(session, form.continueWords, remainingMs()).catch(pageError);
}

/** How an extra field is named in a log line or a FAILED transaction's reason. */
const FIELD_NAMES: Record<PayerField, string> = {
  remark: "remark",
  payerName: "name",
  payerEmail: "e-mail",
  payerPhone: "phone",
};

function pageError(err: unknown): never {
  if (err instanceof MissingElementError) throw new LinkDriverError("page_error", err.message);
  throw err;
}

interface Steps {
  interact(session: CDPSession, protocol: LinkPageProtocol, remainingMs: () => number): Promise<void>;
  /** A reason to refuse the session, or null. */
  verify(info: LinkSessionInfo): string | null;
}

async function startSession(pool: BrowserPool, options: CommonOptions, steps: Steps): Promise<LinkSession> {
  const protocol = options.protocol;
  const origin = new URL(options.url).origin;
  // A configuration stored before the policy (or a name that now resolves elsewhere) is not driven.
  if (options.egress && !(await resolvesAllowed(options.url, options.egress)))
    throw new LinkDriverError("page_error", "the payment page's address is not a public address");
  const deadline = Date.now() + options.timeoutMs;
  const remainingMs = () => Math.max(1, deadline - Date.now());

  const traffic = new PageTraffic(protocol, origin, options.watch ?? {}, options.onWarning);
  let lease: PageLease;
  try {
    lease = await pool.acquire({
      url: options.url,
      timeoutMs: remainingMs(),
      allowedOrigins: [
        origin,
        ...(protocol.apiOrigin === undefined ? [] : [protocol.apiOrigin]),
        ...(options.allowedOrigins ?? []),
      ],
      traffic,
      ...(options.share === undefined ? {} : { share: options.share }),
    });
  } catch (err) {
    await traffic.close();
    throw toDriverError(err);
  }
  traffic.bind(lease);
  try {
    const info = await withinDeadline(deadline, lease.signal, async () => {
      const status = await lease.start();
      if (status < 200 || status > 299) {
        const answer = lease.documentAnswer();
        const refusal = answer === null ? null : classifyRefusal(answer);
        const said = refusal === null ? "" : `: ${refusal.detail.replace(/^HTTP \d+: /, "")}`;
        throw new LinkDriverError("page_error", `the payment page answered HTTP ${status}${said}`, {
          unavailable: isOutageStatus(status),
          httpStatus: status,
          refusal: refusal === null ? null : { ...refusal, by: "page" },
        });
      }
      await steps.interact(lease.session, protocol, remainingMs);
      return traffic.session;
    });
    const refusal = steps.verify(info);
    if (refusal) throw new LinkDriverError("page_error", refusal);
    const base = { qr: info.qr, clientId: info.clientId, ...(info.deeplink ? { deeplink: info.deeplink } : {}) };
    // The page's work is done once its QR is read: what its status poll needs is taken from it, and it is closed.
    const poll = await pollSessionOf(lease.session, info, traffic, options.url, protocol);
    // Closed behind the answer: the QR need not wait for the page's context to be torn down.
    void traffic.close();
    return { ...base, poll };
  } catch (err) {
    const error = toDriverError(err, lease.signal);
    await traffic.close();
    throw error;
  }
}

/** Runs `work` until the deadline or until the lease dies, whichever comes first. */
async function withinDeadline<T>(deadline: number, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const running = work();
  running.catch(() => undefined); // it may lose the race; its late failure is expected then
  try {
    return await Promise.race([
      running,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new LinkDriverError("timeout", "no QR from the payment page in time")),
          Math.max(0, deadline - Date.now()),
        );
      }),
      new Promise<never>((_, reject) => {
        onAbort = () => reject(signal.reason);
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}

function toDriverError(err: unknown, signal?: AbortSignal): LinkDriverError {
  if (err instanceof LinkDriverError) return err;
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    return new LinkDriverError(
      "browser_error",
      reason instanceof Error ? reason.message : "the browser page went away",
      { cause: reason },
    );
  }
  if (err instanceof BrowserPoolError) {
    // Over its owner's share: no page for now, as with a site that does not answer (shareRefusalOf reads the cause).
    if (err.code === "SHARE_FULL")
      return new LinkDriverError("browser_error", err.message, { cause: err, unavailable: true });
    return new LinkDriverError(err.code === "POOL_FULL" ? "timeout" : "browser_error", err.message, { cause: err });
  }
  if (isPuppeteerError(err, "TimeoutError"))
    return new LinkDriverError("timeout", `payment page too slow: ${err.message}`, { cause: err });
  if (err instanceof PageTrafficError)
    return new LinkDriverError("page_error", err.message, {
      cause: err,
      unavailable: err.unavailable,
      httpStatus: err.httpStatus,
      refusal: err.refusal === null ? null : { ...err.refusal, by: "api" },
    });
  // Navigation that never reached the site (refused, reset, DNS, …) is an outage of the page.
  if (err instanceof Error && /net::ERR_/.test(err.message))
    return new LinkDriverError("page_error", err.message, { cause: err, unavailable: true });
  if (
    isPuppeteerError(err, "ProtocolError") ||
    (err instanceof Error && /Target closed|Session closed|Connection closed/i.test(err.message))
  ) {
    return new LinkDriverError("browser_error", err.message, { cause: err });
  }
  return new LinkDriverError("page_error", err instanceof Error ? err.message : String(err), { cause: err });
}

/**
 * puppeteer-core's errors by name (its error classes set `name` to the class name), so that reading an error does not
 * load puppeteer-core: it is loaded when the first browser is launched (chromium.ts), not when the service starts.
 */
function isPuppeteerError(err: unknown, name: "TimeoutError" | "ProtocolError"): err is Error {
  return err instanceof Error && err.name === name;
}
