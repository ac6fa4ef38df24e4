// The fallback when the page's API refuses the worker's own poll as a bot (403): a page of the link held open
// for that payment, and each poll sent by the browser on that page's behalf (its cookies, its Origin and
// Referer, its network stack's fingerprint). Costs a browser page per payment, so it is used only after a refusal.
//
// The page's own scripts are someone else's code: none of them may take part in a poll
// (docs/decisions/0170-a-link-page-cannot-vouch-for-itself.md).
// The request is sent from an isolated world of the page (Page.createIsolatedWorld: the page's document, its own
// JavaScript globals, which the page's scripts can neither see nor replace), and its answer is not taken from
// JavaScript at all: it is read at the Fetch domain's response stage, as the network delivered it (capped,
// answer-body.ts), and matched to the poll by its body, which no one else knows (a fresh device id and its hash).
// A page that replaces fetch, XMLHttpRequest, Response or JSON.parse changes nothing; one whose service worker
// answers instead of the network leaves the poll without an answer (a fault, never a status).

import { resolvesAllowed, type EgressPolicy } from "../upstreams/egress.js";
import { PAYWAY_PATHS } from "../upstreams/payway.js";
import type { AcquireOptions, BrowserPool, PageLease, PageResponse, TrafficReader } from "./browser.js";
import type { LinkPollSession } from "./link-protocol.js";
import { pollRequest, readAnswer, type PollAnswer } from "./poll-client.js";
import { classifyRefusal, type PageRefusal } from "./page-refusal.js";

export interface PagePollOptions {
  url: string;
  apiOrigin: string;
  allowedOrigins: readonly string[];
  egress?: EgressPolicy;
  timeoutMs: number;
  /** Whose held page (the pool's fair shares). */
  share?: AcquireOptions["share"];
}

/** Why a page could not be opened for polling; `httpStatus` when the page answered one, `refusal` when it refused. */
export class PagePollError extends Error {
  constructor(
    message: string,
    readonly httpStatus: number | null,
    readonly refusal: PageRefusal | null = null,
  ) {
    super(message);
  }
}

/** After the poll's fetch settled in the page, how long its answer may still take to be reported (it precedes it). */
const ANSWER_GRACE_MS = 2_000;

/** The network's answers to the polls in flight, by the exact request (URL and body) each poll sent. */
class PollAnswers implements TrafficReader {
  private readonly waiting = new Map<string, (response: PageResponse) => void>();

  constructor(private readonly pollUrl: string) {}

  wants(url: string): boolean {
    return url === this.pollUrl;
  }

  onResponse(response: PageResponse): void {
    const key = response.request.postData;
    const take = key === null ? undefined : this.waiting.get(key);
    if (take === undefined) return; // the page's own traffic to the same URL: not a poll of ours
    this.waiting.delete(key as string);
    take(response);
  }

  /** The answer to the request with this body, or null once cancel() is called first (the poll's time is over). */
  expect(body: string): { answer: Promise<PageResponse | null>; cancel: () => void } {
    let resolve!: (r: PageResponse | null) => void;
    const answer = new Promise<PageResponse | null>((r) => (resolve = r));
    this.waiting.set(body, resolve);
    return {
      answer,
      cancel: () => {
        if (this.waiting.get(body) === resolve) this.waiting.delete(body);
        resolve(null);
      },
    };
  }
}

export class PagePoll {
  /** The isolated world polls are sent from (its execution context id), once made. */
  private world: number | null = null;

  private constructor(
    private readonly lease: PageLease,
    private readonly answers: PollAnswers,
  ) {}

  static async open(pool: BrowserPool, opts: PagePollOptions): Promise<PagePoll> {
    if (opts.egress && !(await resolvesAllowed(opts.url, opts.egress)))
      throw new PagePollError("the payment page's address is not a public address", null);
    const origin = new URL(opts.url).origin;
    const answers = new PollAnswers(opts.apiOrigin + PAYWAY_PATHS.checkPaymentStatus);
    const lease = await pool.acquire({
      url: opts.url,
      timeoutMs: opts.timeoutMs,
      allowedOrigins: [origin, opts.apiOrigin, ...opts.allowedOrigins],
      ...(opts.share === undefined ? {} : { share: opts.share }),
      traffic: answers,
    });
    try {
      const status = await lease.start();
      if (status < 200 || status > 299) {
        const answer = lease.documentAnswer();
        const refusal = answer === null ? null : classifyRefusal(answer);
        throw new PagePollError(`the payment page answered HTTP ${status}`, status, refusal);
      }
      return new PagePoll(lease, answers);
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
    const expected = this.answers.expect(req.body);
    const timer = setTimeout(expected.cancel, timeoutMs + ANSWER_GRACE_MS);
    try {
      const sent = await this.send(req, timeoutMs);
      if (sent !== null) {
        // The fetch settled in the page: its answer, if the network gave one, was reported before that.
        setTimeout(expected.cancel, ANSWER_GRACE_MS).unref();
      }
      const answer = await expected.answer;
      if (answer === null)
        return {
          kind: "fault",
          detail: `the held page's poll got no answer from the network${sent ? `: ${sent}` : ""}`,
          outage: true,
        };
      if (answer.status === null)
        return { kind: "fault", detail: `the held page's poll failed: ${answer.errorText ?? "unknown"}`, outage: true };
      if (answer.body === null)
        return {
          kind: "fault",
          detail: `check-payment-status: ${answer.errorText ?? "the answer could not be read"}`,
          outage: true,
        };
      return readAnswer(answer.status, answer.body, answer.headers);
    } catch (err) {
      expected.cancel();
      return { kind: "fault", detail: `the held page is gone: ${(err as Error).message}`, outage: true };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Sends the poll from the page's isolated world (made once, and again when a navigation destroyed it: each one is
   * a JavaScript context of its own in the page's renderer); what that world's fetch says is only how it ended, never
   * the answer. Resolves when the fetch has settled: "" when it got an answer, else the error it met.
   */
  private async send(
    req: { url: string; headers: Record<string, string>; body: string },
    timeoutMs: number,
  ): Promise<string | null> {
    // Only what a page's script may set: the browser adds Origin, Referer, its cookies and its own user agent.
    const headers = {
      "content-type": req.headers["content-type"],
      language: req.headers.language,
      token: req.headers.token,
    };
    const expression = `(async () => {
      try {
        const r = await fetch(${JSON.stringify(req.url)}, { method: "POST", credentials: "include",
          headers: ${JSON.stringify(headers)}, body: ${JSON.stringify(req.body)},
          signal: AbortSignal.timeout(${Math.max(1, Math.floor(timeoutMs))}) });
        r.body?.cancel();
        return "";
      } catch (e) {
        return String(e);
      }
    })()`;
    const evaluate = async (contextId: number) =>
      (
        await this.lease.session.send("Runtime.evaluate", {
          expression,
          contextId,
          awaitPromise: true,
          returnByValue: true,
        })
      ).result.value;
    let value: unknown;
    try {
      value = await evaluate((this.world ??= await this.isolatedWorld()));
    } catch (err) {
      if (!/Cannot find context/i.test((err as Error).message)) throw err;
      // The page navigated since: its document, and our world in it, are new.
      value = await evaluate((this.world = await this.isolatedWorld()));
    }
    return typeof value === "string" ? value : null;
  }

  /** A JavaScript world of our own in the page's main frame: the page's document, none of its scripts. */
  private async isolatedWorld(): Promise<number> {
    const session = this.lease.session;
    const { frameTree } = await session.send("Page.getFrameTree");
    const { executionContextId } = await session.send("Page.createIsolatedWorld", {
      frameId: frameTree.frame.id,
      worldName: "payment-poll",
    });
    return executionContextId;
  }

  close(): Promise<void> {
    return this.lease.release();
  }
}
