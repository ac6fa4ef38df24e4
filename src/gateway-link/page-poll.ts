// The fallback when the page's API refuses the worker's own poll as a bot (403): a page of the link held open
// for that payment, and each poll sent by the page itself (its fetch, its cookies, its browser's fingerprint).
// Costs a browser page per payment, as monitoring did before, so it is used only after a refusal.

import { resolvesAllowed, type EgressPolicy } from "../upstreams/egress.js";
import type { AcquireOptions, BrowserPool, PageLease } from "./browser.js";
import type { LinkPollSession } from "./link-protocol.js";
import { pollRequest, readAnswer, type PollAnswer } from "./poll-client.js";

export interface PagePollOptions {
  url: string;
  apiOrigin: string;
  allowedOrigins: readonly string[];
  egress?: EgressPolicy;
  timeoutMs: number;
  /** Whose held page (the pool's fair shares). */
  share?: AcquireOptions["share"];
}

/** Why a page could not be opened for polling; `httpStatus` when the page answered one. */
export class PagePollError extends Error {
  constructor(
    message: string,
    readonly httpStatus: number | null,
  ) {
    super(message);
  }
}

export class PagePoll {
  private constructor(private readonly lease: PageLease) {}

  static async open(pool: BrowserPool, opts: PagePollOptions): Promise<PagePoll> {
    if (opts.egress && !(await resolvesAllowed(opts.url, opts.egress)))
      throw new PagePollError("the payment page's address is not a public address", null);
    const origin = new URL(opts.url).origin;
    const lease = await pool.acquire({
      url: opts.url,
      timeoutMs: opts.timeoutMs,
      allowedOrigins: [origin, opts.apiOrigin, ...opts.allowedOrigins],
      ...(opts.share === undefined ? {} : { share: opts.share }),
    });
    try {
      const status = await lease.start();
      if (status < 200 || status > 299) throw new PagePollError(`the payment page answered HTTP ${status}`, status);
      return new PagePoll(lease);
    } catch (err) {
      await lease.release();
      throw err instanceof PagePollError
        ? err
        : new PagePollError(err instanceof Error ? err.message : String(err), null);
    }
  }

  get alive(): boolean {
    return !this.lease.signal.aborted;
  }

  async poll(s: LinkPollSession, timeoutMs: number): Promise<PollAnswer> {
    const req = pollRequest(s);
    // Only what a page's script may set: the browser adds Origin, Referer, its cookies and its own user agent.
    const headers = { "content-type": req.headers["content-type"], language: req.headers.language, token: s.token };
    const expression = `(async () => {
      try {
        const r = await fetch(${JSON.stringify(req.url)}, { method: "POST", credentials: "include",
          headers: ${JSON.stringify(headers)}, body: ${JSON.stringify(req.body)},
          signal: AbortSignal.timeout(${Math.max(1, Math.floor(timeoutMs))}) });
        return { status: r.status, text: await r.text() };
      } catch (e) {
        return { status: 0, text: String(e) };
      }
    })()`;
    try {
      const { result } = await this.lease.session.send("Runtime.evaluate", {
        expression,
        awaitPromise: true,
        returnByValue: true,
      });
      const value = result.value as { status: number; text: string } | undefined;
      if (value === undefined || value.status === 0)
        return { kind: "fault", detail: `the held page's poll failed: ${value?.text ?? "no result"}`, outage: true };
      return readAnswer(value.status, value.text);
    } catch (err) {
      return { kind: "fault", detail: `the held page is gone: ${(err as Error).message}`, outage: true };
    }
  }

  close(): Promise<void> {
    return this.lease.release();
  }
}
