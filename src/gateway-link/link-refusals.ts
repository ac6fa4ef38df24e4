import type { Logger } from "../logger.js";
import { isEdgeRefusal, type PageRefusal, type RefusalKind } from "./page-refusal.js";

/**
 * "The payment page or its API refuses us", told apart by kind (page-refusal.ts) and counted per kind since the
 * process started. Two causes, two remedies:
 * - the provider's edge (a Cloudflare challenge or block page): this address or this browser is refused. Said once
 *   per run of refusals in the log, with LINK_PROXY, and shown in /readyz until a call is answered again;
 * - the page's API refusing the request's data (JSON "Invalid Data", "Invalid Token"): stale page state. An opening
 *   is retried once on a fresh page; a poll is polled again later. Said once per run; the run ends once calls are
 *   answered and no such refusal came for a minute (a refused payment's polls go on between other payments' answers).
 * Per process (each sees its own calls). Decision 0196.
 */
export class LinkRefusals {
  private readonly counts: Record<RefusalKind, KindCount> = {
    challenge: { count: 0, last: null },
    block: { count: 0, last: null },
    page: { count: 0, last: null },
  };
  private edgeRun: Run | null = null;
  private pageRun: Run | null = null;

  constructor(
    private readonly logger: Pick<Logger, "error" | "warn" | "info">,
    private readonly proxy: string | null,
    private readonly now: () => Date,
  ) {}

  /**
   * A refusal from the page or its API (`where`: what answered it; `by`: a page opened, or a status poll). Logged
   * once per run of its kind.
   */
  refusedBy(where: string, refusal: PageRefusal, by: AnsweredBy = "open"): void {
    const at = this.now();
    const seen: Seen = { at: at.toISOString(), where, detail: refusal.detail, status: refusal.status };
    const kind = this.counts[refusal.kind];
    kind.count += 1;
    kind.last = seen;
    if (isEdgeRefusal(refusal)) {
      // A run goes on: /readyz shows its latest refusal, since the run began; the log said it once.
      if (this.edgeRun !== null) {
        Object.assign(this.edgeRun, seen, { kind: refusal.kind, polls: by === "poll" });
        return;
      }
      this.edgeRun = { ...seen, kind: refusal.kind, since: seen.at, lastMs: at.getTime(), polls: by === "poll" };
      this.logger.error(
        { upstream: "gateway-link", where, detail: refusal.detail, kind: refusal.kind, proxy: this.proxy },
        this.message(),
      );
      return;
    }
    if (this.pageRun !== null) return void Object.assign(this.pageRun, seen, { lastMs: at.getTime() });
    this.pageRun = { ...seen, kind: "page", since: seen.at, lastMs: at.getTime(), polls: by === "poll" };
    this.logger.warn(
      { upstream: "gateway-link", where, detail: refusal.detail, code: refusal.code, message: refusal.message },
      `payment-link page refused the request's data (${where}: ${refusal.detail}); likely cause: ${PAGE_CAUSE}`,
    );
  }

  /**
   * A call of the page or its API was answered by this worker's own means (`by`: a page it opened, or a poll it sent;
   * not a held page's poll, which goes around the refusal). The edge's run ends — but a page that opens says nothing
   * of the status polls: a run whose latest refusal was a poll's ends only with a poll's answer (the edge may refuse
   * the poll's fingerprint and let the browser through, so every new payment would end the run and the next poll
   * start it again). The page's data run ends once it has been quiet a while.
   */
  answered(by: AnsweredBy): void {
    if (this.edgeRun !== null && (by === "poll" || !this.edgeRun.polls)) {
      this.edgeRun = null;
      this.logger.info({ upstream: "gateway-link" }, "payment-link pages answer again (no more edge refusals)");
    }
    if (this.pageRun !== null && this.now().getTime() - this.pageRun.lastMs >= PAGE_RUN_QUIET_MS) {
      this.pageRun = null;
      this.logger.info({ upstream: "gateway-link" }, "payment-link pages accept the requests' data again");
    }
  }

  /** The error line of a run of edge refusals (empty when none runs). */
  message(): string {
    const r = this.edgeRun;
    if (r === null) return "";
    return (
      `payment-link page refused with HTTP ${r.status} (${r.where}: ${r.detail}); likely cause: ${edgeCause(r.kind)}` +
      (this.proxy === null ? "" : ` (requests go through the proxy ${this.proxy})`)
    );
  }

  /**
   * /readyz `details.gatewayLink`: the run going on (the edge's first: it stops every payment), and the counts of
   * each kind since start with the last of each. Nothing until the first refusal.
   */
  readiness(): Record<string, unknown> {
    const { challenge, block, page } = this.counts;
    if (challenge.count + block.count + page.count === 0) return {};
    const run = this.edgeRun ?? this.pageRun;
    const current =
      run === null
        ? {}
        : {
            refused: `${run.where} answered HTTP ${run.status} since ${run.since}`,
            detail: run.detail,
            likelyCause: run.kind === "page" ? PAGE_CAUSE : edgeCause(run.kind),
            ...(run.kind === "page" ? {} : { setting: "LINK_PROXY" }),
          };
    const shown = (k: KindCount, cause: string) => ({ count: k.count, cause, last: k.last });
    return {
      gatewayLink: {
        ...current,
        proxy: this.proxy,
        refusals: {
          cloudflareChallenge: shown(challenge, edgeCause("challenge")),
          cloudflareBlock: shown(block, edgeCause("block")),
          pageRefusedData: shown(page, PAGE_CAUSE),
        },
      },
    };
  }
}

interface Seen {
  at: string;
  where: string;
  detail: string;
  status: number;
}
interface KindCount {
  count: number;
  last: Seen | null;
}
interface Run extends Seen {
  kind: RefusalKind;
  since: string;
  /** When the last refusal of the run came (ms of the clock). */
  lastMs: number;
  /** The run's latest refusal was of a status poll (a page opening does not end it then). */
  polls: boolean;
}

/** What answered (or was refused): a page the worker opened (its document, its QR request), or a status poll. */
export type AnsweredBy = "open" | "poll";

/** A run of the page's data refusals ends once calls are answered and none came for this long. */
const PAGE_RUN_QUIET_MS = 60_000;

const ADDRESS_CAUSE =
  "the payment provider's firewall refuses this address (datacenter or outside Cambodia): route the browser and " +
  "the status polls through a proxy in Cambodia with LINK_PROXY=http://[user:pass@]host:port";

function edgeCause(kind: RefusalKind): string {
  if (kind !== "challenge") return ADDRESS_CAUSE;
  return (
    "the payment provider's firewall (Cloudflare) challenges these requests as a bot: the address is refused " +
    "(datacenter or outside Cambodia: set LINK_PROXY=http://[user:pass@]host:port, a proxy in Cambodia) or the " +
    'browser looks automated (LINK_USER_AGENT: a current Chrome\'s user agent, without "Headless")'
  );
}

const PAGE_CAUSE =
  "the page refuses the request's data (stale page state: aba_data, request_time, token), reloaded: an opening " +
  "is retried once on a freshly loaded page, a refused poll is polled again later with backoff; no setting fixes it";
