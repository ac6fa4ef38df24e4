import type { Job } from "agenda";
import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { JobSpec } from "../jobs/scheduler.js";
import { monitorJob, type MonitorDeps } from "../transactions/monitor.js";
import type { BrowserPool } from "./browser.js";
import type { LinkPageProtocol } from "./link-protocol.js";
import type { EgressPolicy } from "../upstreams/egress.js";
import { LinkDriverError, resumeLinkSession, type LinkEvent, type LinkSession } from "./link-driver.js";
import type { LinkService } from "./link-service.js";
import { LINK_LIFETIME_MS } from "./link.types.js";
import { ownerOf } from "./page-shares.js";
import type { TxRecord } from "../transactions/record.js";
import { recordApproval } from "./approval-check.js";

const RESUME_ATTEMPTS = 3;
const TICK_MS = 250;
/** Wait before reopening a page, growing with each failed reopening up to this. */
const MAX_RESUME_WAIT_MS = 10_000;

type Outcome = { kind: "done" } | { kind: "lost"; message: string; unavailable: boolean } | { kind: "handed_over" };

/**
 * The monitors running in this process. On shutdown they are interrupted (their pages closed, nothing
 * written) and the module enqueues a fresh job for each, which another worker takes within a second or
 * two and resumes by clientId, instead of waiting for this process's 30 s job lock to expire.
 */
export class LinkMonitors {
  private readonly running = new Map<string, { stop: AbortController; done: Promise<void> }>();

  track(transactionId: string, work: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const stop = new AbortController();
    const done = work(stop.signal).finally(() => this.running.delete(transactionId));
    this.running.set(transactionId, { stop, done: done.catch(() => undefined) });
    return done;
  }

  get size(): number {
    return this.running.size;
  }

  /** Interrupts every running monitor and waits until each has closed its page; returns their transactions. */
  async interruptAll(): Promise<string[]> {
    const all = [...this.running.entries()];
    for (const [, m] of all) m.stop.abort();
    await Promise.all(all.map(([, m]) => m.done));
    return all.map(([id]) => id);
  }
}

/**
 * Holds one transaction's payment page until it ends, for at most 180 s: scanned → payment.scanned,
 * approved → SUCCESS (+ receiptUrl), a receipt that comes after an approval without one →
 * transaction.updated (the page is watched on for it until the 180 s are over), the deadline → EXPIRED,
 * a page that fails beyond `RESUME_ATTEMPTS`
 * reopenings → FAILED. An outage of the page's site (unreachable, 429/502/503/504, unreadable answers,
 * too slow) is not a failure of the payment: the monitor keeps reopening the page, with a growing wait,
 * until the site is back or the 180 s are over (EXPIRED), as the other areas wait out their upstreams.
 * The Agenda lock is short and renewed while the page is watched or reopened, so when a worker dies
 * another takes the job over within ~30 s and resumes the page by its clientId.
 */
export interface LinkMonitorDeps {
  store: TransactionStore;
  clock: Clock;
  logger: Logger;
  maxMonitors: number;
  openTimeoutMs: number;
  protocol: LinkPageProtocol;
  egress: EgressPolicy;
  allowedOrigins: readonly string[];
}

export function linkMonitorJob(
  deps: LinkMonitorDeps,
  link: LinkService,
  pool: BrowserPool,
  monitors: LinkMonitors,
): JobSpec<{ transactionId: string }> {
  return {
    name: "link.monitor",
    concurrency: deps.maxMonitors,
    lockLifetimeMs: 30_000,
    run: ({ transactionId }, job) =>
      monitors.track(transactionId, (interrupted) => holdPage({ deps, link, pool, job, interrupted }, transactionId)),
  };
}

type MonitorJob = Job<{ transactionId: string }>;

/** One run of the monitor job: what it works with. */
interface Watch {
  deps: LinkMonitorDeps;
  link: LinkService;
  pool: BrowserPool;
  job: MonitorJob;
  /** Aborted on shutdown: the page is closed, nothing written, and another worker resumes it. */
  interrupted: AbortSignal;
}

/**
 * One transaction's page, held until the payment ends: the page handed over by the issuing request, or reopened by
 * clientId (with a growing wait) after it was lost, until the deadline (EXPIRED) or too many failures (FAILED).
 */
async function holdPage(w: Watch, transactionId: string): Promise<void> {
  const { store, clock, logger } = w.deps;
  let tx = await store.get(transactionId);
  if (tx === null || tx.status !== "PENDING") return;
  const deadline = tx.expiresAt.getTime();
  let session: LinkSession | null = w.link.handoff.get(transactionId) ?? null;
  w.link.handoff.delete(transactionId);
  let lastError = "";
  // Only failures of the payment itself count towards FAILED; outages of the page's site are waited out.
  let failures = 0;
  for (let reopenings = 0; failures <= RESUME_ATTEMPTS;) {
    if (w.interrupted.aborted) {
      await session?.close();
      return;
    }
    if (clock.now().getTime() >= deadline) {
      await store.transition({ id: transactionId, to: "EXPIRED", event: "payment.expired" });
      return;
    }
    await w.job.touch().catch(() => undefined);
    if (session === null) {
      const reopened = await reopenPage(w, tx);
      if (!("session" in reopened)) {
        lastError = reopened.error;
        if (!reopened.unavailable) failures++;
        reopenings++;
        const wait = Math.min(1000 * reopenings, MAX_RESUME_WAIT_MS, Math.max(0, deadline - clock.now().getTime()));
        await pause(wait, w.interrupted);
        continue;
      }
      session = reopened.session;
    }
    const outcome = await followPage(w, transactionId, session, deadline);
    session = null;
    if (outcome.kind === "done" || outcome.kind === "handed_over") return;
    lastError = outcome.message;
    if (!outcome.unavailable) failures++;
    logger.warn(
      { tx: transactionId, failures, unavailable: outcome.unavailable, error: lastError },
      "payment page lost; resuming",
    );
    tx = (await store.get(transactionId)) ?? tx;
    if (tx.status !== "PENDING") return;
  }
  await store.transition({
    id: transactionId,
    to: "FAILED",
    event: "payment.failed",
    upstream: { failure: { message: `monitoring failed: ${lastError}` } },
  });
}

/** The transaction's page opened again by its clientId, or why not (an outage of the site is `unavailable`). */
async function reopenPage(
  w: Watch,
  tx: Pick<TxRecord, "upstream" | "upstreamRef" | "merchantRef" | "expiresAt">,
): Promise<{ session: LinkSession } | { error: string; unavailable: boolean }> {
  const url = (tx.upstream.linkUrl as string | undefined) ?? "";
  try {
    const session = await resumeLinkSession(w.pool, {
      url,
      clientId: tx.upstreamRef as string,
      timeoutMs: w.deps.openTimeoutMs,
      protocol: w.deps.protocol,
      egress: w.deps.egress,
      allowedOrigins: w.deps.allowedOrigins,
      // A held page of its merchant's share; over it, waited out as an outage of the page (unavailable).
      share: { owner: ownerOf(tx), holdUntil: tx.expiresAt.getTime() },
      onWarning: (warning) => w.deps.logger.warn({ url }, warning),
    });
    return { session };
  } catch (err) {
    return { error: (err as Error).message, unavailable: err instanceof LinkDriverError && err.unavailable };
  }
}

/** Waits `ms`, or less when the monitor is interrupted. */
function pause(ms: number, interrupted: AbortSignal): Promise<unknown> {
  return new Promise((r) => {
    const timer = setTimeout(r, ms);
    interrupted.addEventListener("abort", () => (clearTimeout(timer), r(null)), { once: true });
  });
}

/** Follows one open page session until the payment ends, the page is lost, the deadline passes or shutdown. */
async function followPage(w: Watch, txId: string, session: LinkSession, deadline: number): Promise<Outcome> {
  const { store, clock } = w.deps;
  const it = session.events[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<LinkEvent>> | null = null;
  let lastTouch = Date.now();
  // SUCCESS is recorded, its receipt not yet: only the receipt is still awaited, and nothing can fail any more.
  let awaitingReceipt = false;
  try {
    for (;;) {
      if (w.interrupted.aborted) return { kind: "handed_over" };
      if (clock.now().getTime() >= deadline) {
        if (!awaitingReceipt) await store.transition({ id: txId, to: "EXPIRED", event: "payment.expired" });
        return { kind: "done" };
      }
      if (Date.now() - lastTouch > 10_000) {
        lastTouch = Date.now();
        await w.job.touch().catch(() => undefined);
      }
      pending ??= it.next();
      const r = await Promise.race([pending, new Promise<null>((res) => setTimeout(() => res(null), TICK_MS))]);
      if (r === null) continue;
      pending = null;
      if (r.done)
        return awaitingReceipt
          ? { kind: "done" }
          : { kind: "lost", message: "the page session ended", unavailable: false };
      const step = await recordEvent(w.deps, txId, r.value, awaitingReceipt);
      if (step === "awaiting_receipt") {
        awaitingReceipt = true;
        continue;
      }
      if (step !== null) return step;
      if (awaitingReceipt) continue;
      const now = await store.get(txId);
      if (now === null || (now.status !== "PENDING" && now.status !== "CHECKOUT")) return { kind: "done" };
    }
  } finally {
    await session.close();
  }
}

/**
 * What one page event records through transition(): an Outcome ends the watch, `awaiting_receipt` (approved
 * without its receipt) keeps watching for the receipt only, null watches on.
 */
async function recordEvent(
  deps: LinkMonitorDeps,
  txId: string,
  e: LinkEvent,
  awaitingReceipt: boolean,
): Promise<Outcome | "awaiting_receipt" | null> {
  const { store, clock } = deps;
  if (e.type === "scanned") {
    await store.transition({ id: txId, event: "payment.scanned", upstream: { scannedAt: clock.now().toISOString() } });
  } else if (e.type === "approved") {
    // SUCCESS only when what was paid is what was asked; else held (approval-check.ts) and the watch ends.
    const change = {
      id: txId,
      to: "SUCCESS" as const,
      event: "payment.completed" as const,
      upstream: { approvedAt: clock.now().toISOString(), ...(e.receiptUrl ? { receiptUrl: e.receiptUrl } : {}) },
    };
    const done = await recordApproval(store, change, e.paid, clock.now());
    if (e.receiptUrl !== undefined || done.tx.status !== "SUCCESS" || done.tx.upstream.receiptUrl !== undefined)
      return { kind: "done" };
    return "awaiting_receipt";
  } else if (e.type === "receipt") {
    // The one visible change a SUCCESS still takes (transition.ts): transaction.updated with the receipt.
    await store.transition({
      id: txId,
      event: "transaction.updated",
      addition: true,
      upstream: { receiptUrl: e.receiptUrl, receiptAt: clock.now().toISOString() },
    });
    return { kind: "done" };
  } else if (e.type === "error" && e.fatal) {
    return awaitingReceipt
      ? { kind: "done" }
      : { kind: "lost", message: e.message, unavailable: e.unavailable ?? false };
  }
  return null;
}

/**
 * Ends link transactions whose 180 s passed with no monitor running (e.g. every worker was down). The page
 * monitor above follows the page; this is the shared loop with no upstream to ask. A claimed link
 * transaction's next check is its expiry.
 */
export function linkExpirySweepJob(deps: MonitorDeps): JobSpec {
  return monitorJob(deps, {
    name: "link.expire",
    area: "gateway_link",
    every: "1 second",
    recheckMs: LINK_LIFETIME_MS,
    batch: 500,
    port: null,
    lockLifetimeMs: 30_000,
  });
}
