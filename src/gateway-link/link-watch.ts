// Payments followed without a browser: once the QR is read the page is closed, and this worker polls the page's
// own status call every 3 s (poll-client.ts) until approved (SUCCESS with the receipt), declined (FAILED) or the
// 180 s are over (EXPIRED). After EXPIRED it keeps polling, backing off to one poll a minute, for LINK_LATE_WATCH_MS:
// an approval then is a late payment (EXPIRED → SUCCESS with `late: true`, the generic QR area's rule). A poll refused
// by the provider's edge (a Cloudflare challenge or block) falls back to a page held for that payment (page-poll.ts);
// one the page's API refuses (JSON "Invalid Token"…) is polled again, backing off (decision 0196). Every change goes
// through the one transition function. What a worker follows is leased on the row (poll-store.ts): a dead worker's
// payments are claimed by another once their lease runs out, and go on from what is stored.

import type { SecretBox } from "../auth/secret-box.js";
import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { TxRecord } from "../transactions/record.js";
import type { TransactionStore, TransitionRequest } from "../transactions/transition.js";
import type { LinkPollSession } from "./link-protocol.js";
import type { LinkRefusals } from "./link-refusals.js";
import type { PagePoll } from "./page-poll.js";
import { ownerOf, type Claim, type PageOwner } from "./page-shares.js";
import { shareRefusalOf } from "./browser.js";
import { acceptableReceipt, droppedReceipt } from "./page-traffic.js";
import { pollOnce, type PollAnswer } from "./poll-client.js";
import type { UpstreamClient } from "../upstreams/http-client.js";
import { openPoll, POLL_LEASE_MS, renewLeases, setLateWatch } from "./poll-store.js";
import type { PaywayStatus } from "./payway-protocol.js";
import { recordApproval } from "./approval-check.js";
import { classifyRefusal, type PageRefusal } from "./page-refusal.js";

export interface LinkWatchDeps {
  store: TransactionStore;
  db: Db;
  clock: Clock;
  logger: Logger;
  box: Pick<SecretBox, "open">;
  /** The HTTP client of the polls (poll-client.ts). */
  polls: UpstreamClient;
  timeoutMs: number;
  /** LINK_LATE_WATCH_MS (0: no late watch). */
  lateWatchMs: number;
  /** LINK_MAX_POLLS: payments one worker follows at once. */
  maxPolls: number;
  refusals: LinkRefusals;
  /**
   * A page of the link held for polling, after the worker's own polls were refused: its owner's (the pool's fair
   * shares), kept for this payment until its expiry and then only while no newer payment of that share needs it.
   */
  openPage(linkUrl: string, apiOrigin: string, share: { owner: PageOwner; holdUntil: number }): Promise<PagePoll>;
  /** LINK_POLL_INTERVAL_MS; unset: the page's own cadence (3 s). */
  intervalMs?: number;
}

interface Entry {
  id: string;
  session: LinkPollSession;
  linkUrl: string;
  expiresAt: number;
  late: boolean;
  scanned: boolean;
  /** Consecutive definite failures (not outages). */
  failures: number;
  /** Consecutive polls the page's API refused (JSON, not the edge): each spaces the next poll further. */
  pageRefusals: number;
  viaPage: boolean;
  page: PagePoll | null;
  /** Whose page it is, for the pool's shares; `noRoom`: told once that its share had no page for it. */
  owner: PageOwner;
  noRoom: boolean;
  /** A page is being opened for it (counted by the pool already). */
  opening: boolean;
  unknownActions: Set<string>;
  timer: NodeJS.Timeout | null;
  /** When (wall clock) the next poll should go out: its lateness is measured against it. */
  dueAt: number;
}

/** A payment whose status calls keep failing for this many polls in a row (not outages) has failed. */
const MAX_FAILURES = 10;
const LATE_MAX_INTERVAL_MS = 60_000;
/** The furthest apart polls refused by the page's API go (doubling from the interval). */
const REFUSED_MAX_SPACING_MS = 30_000;
const KEPT_SAMPLES = 20_000;

export class LinkWatch {
  private readonly entries = new Map<string, Entry>();
  private renewTimer: NodeJS.Timeout | null = null;
  private readonly interval: number;
  /** A ring of the most recent poll latenesses (ms). */
  private readonly lateness: number[] = [];
  private latenessNext = 0;
  private polls = 0;

  constructor(private readonly deps: LinkWatchDeps) {
    this.interval = deps.intervalMs ?? 3000;
  }

  get size(): number {
    return this.entries.size;
  }

  /** How many more payments this worker can follow. */
  get room(): number {
    return Math.max(0, this.deps.maxPolls - this.entries.size);
  }

  holds(id: string): boolean {
    return this.entries.has(id);
  }

  /** Keeps the leases of what this worker follows alive (every quarter of a lease). */
  start(): void {
    this.renewTimer ??= setInterval(() => void this.renew(), POLL_LEASE_MS / 4);
    this.renewTimer.unref();
  }

  /**
   * Starts following a transaction whose lease this worker holds. `fresh`: its QR was just issued here (first poll
   * one interval later, as the page does); else it was claimed (first poll soon, spread over one interval).
   */
  adopt(tx: TxRecord, fresh = false): boolean {
    if (this.entries.has(tx.id)) return true;
    const session = this.sessionOf(tx);
    if (session === null) return false;
    const entry: Entry = {
      id: tx.id,
      session,
      linkUrl: typeof tx.upstream.linkUrl === "string" ? tx.upstream.linkUrl : session.origin,
      expiresAt: tx.expiresAt.getTime(),
      late: tx.status === "EXPIRED",
      scanned: tx.upstream.scannedAt !== undefined,
      failures: 0,
      pageRefusals: 0,
      viaPage: false,
      page: null,
      owner: ownerOf(tx),
      noRoom: false,
      opening: false,
      unknownActions: new Set(),
      timer: null,
      dueAt: 0,
    };
    this.entries.set(tx.id, entry);
    this.schedule(entry, fresh ? this.interval : Math.floor(Math.random() * this.interval));
    return true;
  }

  private sessionOf(tx: TxRecord): LinkPollSession | null {
    try {
      return openPoll(this.deps.box, tx);
    } catch (err) {
      this.deps.logger.error(
        { tx: tx.id, err: (err as Error).message },
        "payment-link poll session does not open (SECRET_KEY changed?): the payment cannot be followed",
      );
      return null;
    }
  }

  /**
   * Payments within their time that need a page of their own and have none yet: those polled through a page whose
   * page is gone or never came, and, once one payment of a configuration is polled through a page (its polls were
   * refused), every other of that configuration, whose polls will be refused as well.
   */
  waitingForPages(): Claim[] {
    const now = this.deps.clock.now().getTime();
    const refused = new Set<string>();
    for (const e of this.entries.values()) if (e.viaPage && !e.late) refused.add(configKey(e.owner));
    const waiting: Claim[] = [];
    for (const e of this.entries.values())
      if (!e.late && e.expiresAt > now && !e.opening && !e.page?.alive && refused.has(configKey(e.owner)))
        waiting.push({ owner: e.owner, until: e.expiresAt });
    return waiting;
  }

  /** Polls sent, payments held (through a page among them), and the p99 of how late polls went out. */
  stats(): { held: number; viaPage: number; polls: number; latenessP99Ms: number; latenessMaxMs: number } {
    const sorted = [...this.lateness].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    let viaPage = 0;
    for (const e of this.entries.values()) if (e.viaPage) viaPage++;
    return { held: this.entries.size, viaPage, polls: this.polls, latenessP99Ms: at(0.99), latenessMaxMs: at(1) };
  }

  /** Shutdown: stops following and makes every lease due now, so another worker claims them at once. */
  async handOver(): Promise<void> {
    const ids = [...this.entries.keys()];
    await this.stop();
    await renewLeases(this.deps.db, ids, this.deps.clock.now()).catch((err: unknown) =>
      this.deps.logger.warn({ err }, "could not hand link polls over; their leases run out in 20 s"),
    );
    if (ids.length > 0) this.deps.logger.info({ polls: ids.length }, "link polls handed over");
  }

  async stop(): Promise<void> {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    const all = [...this.entries.values()];
    this.entries.clear();
    for (const e of all) if (e.timer) clearTimeout(e.timer);
    await Promise.all(all.map((e) => e.page?.close()));
  }

  private async renew(): Promise<void> {
    const until = new Date(this.deps.clock.now().getTime() + POLL_LEASE_MS);
    await renewLeases(this.deps.db, [...this.entries.keys()], until).catch((err: unknown) =>
      this.deps.logger.warn({ err }, "could not renew link poll leases"),
    );
  }

  /**
   * The next poll at a fixed cadence from the last one's due time (a slow answer does not push the rest back), never
   * after the 180 s; in the late watch, spaced by a quarter of the time since expiry (3 s up to 60 s).
   */
  private schedule(entry: Entry, delayMs?: number): void {
    const now = this.deps.clock.now().getTime();
    let due: number;
    if (delayMs !== undefined) due = Date.now() + delayMs;
    else if (entry.late)
      due = entry.dueAt + Math.min(LATE_MAX_INTERVAL_MS, Math.max(this.interval, (now - entry.expiresAt) / 4));
    else due = entry.dueAt + Math.min(this.interval, Math.max(0, entry.expiresAt - now));
    entry.dueAt = due;
    entry.timer = setTimeout(() => void this.run(entry), Math.max(0, due - Date.now()));
    entry.timer.unref();
  }

  private async run(entry: Entry): Promise<void> {
    if (this.entries.get(entry.id) !== entry) return;
    try {
      if (await this.overdue(entry)) return this.drop(entry);
      this.note(Date.now() - entry.dueAt);
      const answer = await this.poll(entry);
      if (this.entries.get(entry.id) !== entry) return;
      if (await this.handle(entry, answer)) return this.drop(entry);
    } catch (err) {
      this.deps.logger.warn({ tx: entry.id, err: (err as Error).message }, "payment-link poll failed");
    }
    if (this.entries.get(entry.id) === entry) this.schedule(entry);
  }

  /** The 180 s are over (→ EXPIRED, late watch from now), or the late watch is: true when nothing is left to do. */
  private async overdue(entry: Entry): Promise<boolean> {
    const { store, db, clock, lateWatchMs } = this.deps;
    const now = clock.now().getTime();
    if (entry.late) {
      if (now <= entry.expiresAt + lateWatchMs) return false;
      await setLateWatch(db, entry.id, null);
      return true;
    }
    if (now < entry.expiresAt) return false;
    const watchUntil = lateWatchMs > 0 ? new Date(now + POLL_LEASE_MS) : null;
    const r = await store.transition({
      id: entry.id,
      to: "EXPIRED",
      event: "payment.expired",
      nextCheckAt: watchUntil,
    });
    // Expired already by a read or the sweep: the late watch is this worker's all the same.
    if (!r.won && r.tx.status === "EXPIRED") await setLateWatch(db, entry.id, watchUntil);
    if (r.tx.status !== "EXPIRED" || watchUntil === null) return true;
    entry.late = true;
    return false;
  }

  private async poll(entry: Entry): Promise<PollAnswer> {
    this.polls++;
    const { timeoutMs } = this.deps;
    if (!entry.viaPage) return pollOnce(this.deps.polls, entry.session, timeoutMs);
    if (entry.page === null || !entry.page.alive) {
      await entry.page?.close();
      entry.page = null;
      try {
        const share = { owner: entry.owner, holdUntil: entry.expiresAt };
        entry.opening = true;
        entry.page = await this.deps.openPage(entry.linkUrl, entry.session.apiOrigin, share).finally(() => {
          entry.opening = false;
        });
        entry.noRoom = false;
      } catch (err) {
        if (shareRefusalOf(err) !== null) return this.noRoom(entry, (err as Error).message);
        const { httpStatus, refusal } = err as { httpStatus?: number | null; refusal?: PageRefusal | null };
        const refused = refusal ?? (httpStatus === 403 ? classifyRefusal({ status: 403, body: null }) : null);
        if (refused)
          return { kind: "refused", detail: `the payment page answered ${refused.detail}`, refusal: refused };
        return { kind: "fault", detail: `no page to poll through: ${(err as Error).message}`, outage: true };
      }
    }
    return entry.page.poll(entry.session, timeoutMs);
  }

  /**
   * Its share of the pool has no page for it now (the merchant's other payments hold them, or its own page was taken
   * for a newer payment once its time was over): tried again at its next poll, like an outage; said once.
   */
  private noRoom(entry: Entry, detail: string): PollAnswer {
    if (!entry.noRoom)
      this.deps.logger.warn(
        { tx: entry.id, merchant: entry.owner.merchant, late: entry.late, detail },
        "no held page for this payment within its share of the worker's pages: it is polled through one when one frees",
      );
    entry.noRoom = true;
    return { kind: "fault", detail: `no page to poll through: ${detail}`, outage: true };
  }

  /** Records what a poll said; true when this payment needs no more polls. */
  private async handle(entry: Entry, answer: PollAnswer): Promise<boolean> {
    if (answer.kind === "refused") return this.refused(entry, answer.refusal, answer.detail);
    if (answer.kind === "fault") return this.fault(entry, answer.detail, answer.outage);
    // A held page's answer goes around the worker's refused polls: only the worker's own says they pass again.
    if (!entry.viaPage) this.deps.refusals.answered();
    entry.failures = 0;
    entry.pageRefusals = 0;
    const s = answer.status;
    if (s.action === "approved") return this.approved(entry, s);
    if (s.declined) return this.declined(entry, s);
    if (!s.known && !entry.unknownActions.has(s.action)) {
      entry.unknownActions.add(s.action);
      this.deps.logger.warn(
        { tx: entry.id, action: s.action, message: s.message },
        `PayWay reported an action public code does not show ("${s.action}"): treated as still pending`,
      );
    }
    if (!entry.late && !entry.scanned && (s.action === "scanned" || s.action === "processing-payment")) {
      entry.scanned = true;
      const scannedAt = this.deps.clock.now().toISOString();
      await this.deps.store.transition({ id: entry.id, event: "payment.scanned", upstream: { scannedAt } });
    }
    return false;
  }

  /**
   * A refused poll. The edge's refusal (a Cloudflare challenge or block: this caller is refused) moves the payment to
   * a held page, whose browser the edge lets through. The page's API refusing the poll's data is the page's own error
   * for this payment: no browser would fare better, it is not a decline, and it never fails the payment by itself.
   */
  private refused(entry: Entry, refusal: PageRefusal, detail: string): boolean {
    this.deps.refusals.refusedBy(entry.viaPage ? "the status poll of a held page" : "the status poll", refusal);
    if (refusal.kind === "page") return this.pageRefused(entry, detail);
    if (!entry.viaPage) {
      entry.viaPage = true;
      this.deps.logger.warn(
        { tx: entry.id, detail },
        `payment-link status poll refused by the provider's edge (${refusal.kind}): following this payment through ` +
          "a held page",
      );
    }
    return false;
  }

  /**
   * Polled again, each refusal in a row doubling the spacing from the interval up to 30 s (never past the 180 s,
   * whose end is still marked on time), until the API answers or the watch ends. Said once per payment.
   */
  private pageRefused(entry: Entry, detail: string): boolean {
    entry.pageRefusals++;
    if (entry.pageRefusals === 1)
      this.deps.logger.warn(
        { tx: entry.id, detail },
        "payment-link status poll refused by the page's API (its data, not the caller): polled again, backing off",
      );
    const spacing = Math.min(REFUSED_MAX_SPACING_MS, this.interval * 2 ** (entry.pageRefusals - 1));
    let extra = spacing - this.interval;
    // dueAt is on the wall clock, the expiry on the service's: compared as the time left.
    if (!entry.late) extra = Math.min(extra, entry.expiresAt - this.deps.clock.now().getTime() - this.interval);
    entry.dueAt += Math.max(0, extra);
    return false;
  }

  private async fault(entry: Entry, detail: string, outage: boolean): Promise<boolean> {
    if (outage) return false;
    entry.failures++;
    if (entry.failures < MAX_FAILURES) return false;
    if (entry.late) {
      await setLateWatch(this.deps.db, entry.id, null);
      return true;
    }
    const message = `monitoring failed: ${detail}, ${entry.failures} times in a row`;
    await this.deps.store.transition({
      id: entry.id,
      to: "FAILED",
      event: "payment.failed",
      upstream: { failure: { message } },
    });
    return true;
  }

  private async approved(entry: Entry, s: PaywayStatus): Promise<boolean> {
    const { store, clock, logger } = this.deps;
    // PayWay's receipt is on its API's origin; a receipt anywhere else is dropped, the approval still recorded.
    const receiptUrl =
      s.receiptUrl === null
        ? null
        : acceptableReceipt(s.receiptUrl, new URL(entry.linkUrl).origin, [entry.session.apiOrigin]);
    if (s.receiptUrl !== null && receiptUrl === null) logger.warn({ tx: entry.id }, droppedReceipt(s.receiptUrl));
    const change: TransitionRequest = {
      id: entry.id,
      to: "SUCCESS",
      event: "payment.completed",
      receiptUrl,
      upstream: { approvedAt: clock.now().toISOString() },
    };
    // SUCCESS only when the QR paid is what was asked; else held (approval-check.ts). PayWay states no paid figures.
    const now = clock.now();
    let r = await recordApproval(store, entry.late ? { ...change, late: true } : change, undefined, now);
    // Declared expired meanwhile (a read, the sweep): the approval is a late payment.
    if (!r.won && r.tx.status === "EXPIRED") r = await recordApproval(store, { ...change, late: true }, undefined, now);
    if (r.won && r.tx.upstream.late === true)
      logger.warn(
        { tx: entry.id, expiredAt: new Date(entry.expiresAt).toISOString() },
        "gateway-link: late payment recorded (approved after the QR's 180 s): reconcile it",
      );
    return true;
  }

  private async declined(entry: Entry, s: PaywayStatus): Promise<boolean> {
    if (entry.late) {
      await setLateWatch(this.deps.db, entry.id, null);
      return true;
    }
    const message = `PayWay reported "${s.action}"${s.message === null ? "" : `: ${s.message}`}`;
    await this.deps.store.transition({
      id: entry.id,
      to: "FAILED",
      event: "payment.failed",
      upstream: { failure: { message } },
    });
    return true;
  }

  private drop(entry: Entry): void {
    if (entry.timer) clearTimeout(entry.timer);
    if (this.entries.get(entry.id) === entry) this.entries.delete(entry.id);
    void entry.page?.close();
  }

  private note(latenessMs: number): void {
    this.lateness[this.latenessNext] = Math.max(0, latenessMs);
    this.latenessNext = (this.latenessNext + 1) % KEPT_SAMPLES;
  }
}

function configKey(owner: PageOwner): string {
  return `${owner.merchant}\n${owner.config}`;
}
