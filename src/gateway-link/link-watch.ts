// Payments followed without a browser: once the QR is read the page is closed, and this worker polls the page's
// own status call every 3 s ± 10 % (poll-client.ts) until approved (SUCCESS with the receipt), declined (FAILED) or
// the 180 s are over (EXPIRED, on time even while a poll waits for its answer). After EXPIRED it keeps polling for
// LINK_LATE_WATCH_MS (24 h), about once a minute the first hour and every 10 minutes after: an approval then is a late
// payment (EXPIRED → SUCCESS with `late: true`, the generic QR area's rule). A late payment whose next poll is more
// than a lease away is parked in the database (next_check_at) and leaves this worker's memory until then
// (docs/decisions/0188-link-late-watch-for-the-qrs-life.md). Outages (5xx, timeouts, connection errors) and other
// errors never end a payment: only the page's own decline does (docs/decisions/0189-link-outages-never-fail-a-payment.md).
// Polls are paced by one gate per worker: LINK_POLL_RATE, and a 429's Retry-After (poll-pace.ts). A poll refused
// by the provider's edge (a Cloudflare challenge or block) falls back to a page held for that payment (page-poll.ts),
// polled through at once, and the worker remembers that configuration's edge refusal for its other payments and its
// late payments' next claims; one the page's API refuses (JSON "Invalid Token"…) is polled again, backing off
// (docs/decisions/0196-refusals-told-apart.md). Every change goes through the one
// transition function. What a worker follows is leased on the row (poll-store.ts): a dead worker's payments are
// claimed by another once their lease runs out, and go on from what is stored.

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
import { jittered, lateGapMs, PollGate, retryAfterMs } from "./poll-pace.js";
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
  /** LINK_POLL_RATE: polls per second at most, this worker's all together; unset: 1000. */
  pollRate?: number;
}

interface Entry {
  id: string;
  session: LinkPollSession;
  linkUrl: string;
  expiresAt: number;
  late: boolean;
  scanned: boolean;
  /** Consecutive definite errors (not outages): logged at ERRORS_LOGGED_AT, never a reason to end the payment. */
  failures: number;
  /** Consecutive polls the page's API refused (JSON, not the edge): each spaces the next poll further. */
  pageRefusals: number;
  /** The payer's app reported processing-payment after the 180 s: the late watch looks again at the page's cadence. */
  processing: boolean;
  /** A poll of it is waiting for its answer. */
  inFlight: boolean;
  /** Its move to EXPIRED, once begun (the expiry tick and its own next poll may both get there); true: watched late. */
  expiring: Promise<boolean> | null;
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
  /** When (wall clock) its last poll went out. */
  sentAt: number;
  /** The same, on the gate's clock (PollGate.stamp): tells a 429 of a poll sent before the running hold. */
  sentStamp: number;
}

/** Definite errors this many polls in a row are logged (once per run): the payment is not failed for them. */
const ERRORS_LOGGED_AT = 10;
/** A late poll due further away than a lease is parked in the database instead of held in memory. */
const PARK_AFTER_MS = POLL_LEASE_MS;
/** How often the payments past their 180 s whose poll is held up (awaiting an answer, or a slot) are expired. */
const EXPIRY_TICK_MS = 250;
/** The furthest apart polls refused by the page's API go (doubling from the interval). */
const REFUSED_MAX_SPACING_MS = 30_000;
const KEPT_SAMPLES = 20_000;
/**
 * After the edge refused a configuration's direct poll, its payments (new ones, and late ones claimed again) are
 * polled through a page for this long; then one direct poll tries again (the block may have lifted).
 */
const EDGE_REMEMBERED_MS = 10 * 60_000;
/** A poll out of turn (a recheck) waits at most this long for its slot under LINK_POLL_RATE; longer: asked later. */
const OUT_OF_TURN_MAX_WAIT_MS = 5_000;

export class LinkWatch {
  private readonly entries = new Map<string, Entry>();
  private renewTimer: NodeJS.Timeout | null = null;
  private expiryTimer: NodeJS.Timeout | null = null;
  private readonly interval: number;
  private readonly gate: PollGate;
  /** Late payments parked in the database by this worker (stats). */
  private parked = 0;
  /** A ring of the most recent poll latenesses (ms). */
  private readonly lateness: number[] = [];
  private latenessNext = 0;
  private polls = 0;
  /** Polls that got no usable answer (outages: timeouts, connection errors, 5xx…) since start (stats). */
  private outages = 0;
  /** Runs of the area's claim sweep on this worker (stats: a test knows the sweep had its chance). */
  private sweeps = 0;
  /**
   * Configurations whose direct polls the provider's edge refused on this worker, and when (wall clock) it last did:
   * the edge refuses this worker's address or fingerprint, not one payment, so every payment of the configuration
   * is polled through a page meanwhile (EDGE_REMEMBERED_MS), including a late one claimed again after being parked.
   */
  private readonly edgeRefused = new Map<string, number>();

  constructor(private readonly deps: LinkWatchDeps) {
    this.interval = deps.intervalMs ?? 3000;
    this.gate = new PollGate(deps.pollRate ?? 1000);
  }

  get size(): number {
    return this.entries.size;
  }

  /** How many more payments this worker can follow. */
  get room(): number {
    return Math.max(0, this.deps.maxPolls - this.entries.size);
  }

  /** How many late payments to claim now: the poll slots of the next second that pending payments left free. */
  get lateRoom(): number {
    return Math.min(this.room, this.gate.spare(1000));
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
   * one interval later, as the page does); else it was claimed (first poll soon, spread over one interval; a late
   * one over at most the sweep's second: it came due by its own jittered time).
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
      sentAt: 0,
      sentStamp: 0,
      processing: false,
      inFlight: false,
      expiring: null,
    };
    // A configuration whose direct polls the edge refuses here: polled through a page from its first poll.
    entry.viaPage = this.edgeRefuses(entry.owner);
    this.entries.set(tx.id, entry);
    const spread = entry.late ? Math.min(this.interval, 1000) : this.interval;
    this.schedule(entry, fresh ? jittered(this.interval) : Math.floor(Math.random() * spread));
    this.expiryTimer ??= setInterval(() => this.expireHeldUp(), EXPIRY_TICK_MS);
    this.expiryTimer.unref();
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
   * refused), every other of that configuration, whose polls will be refused as well. Late payments are not among
   * them: one may hold a page, but at the lowest priority — its hold is kept only until its expiry, already past, so
   * any payment within its time takes it — and a generate is never refused for its sake (decision 0188).
   */
  waitingForPages(): Claim[] {
    const now = this.deps.clock.now().getTime();
    const refused = new Set<string>();
    for (const e of this.entries.values()) if (e.viaPage && !e.late) refused.add(configKey(e.owner));
    for (const e of this.entries.values()) if (this.edgeRefuses(e.owner)) refused.add(configKey(e.owner));
    const waiting: Claim[] = [];
    for (const e of this.entries.values())
      if (!e.late && e.expiresAt > now && !e.opening && !e.page?.alive && refused.has(configKey(e.owner)))
        waiting.push({ owner: e.owner, until: e.expiresAt });
    return waiting;
  }

  /**
   * Polls sent, payments held (through a page among them; late ones among them), and the p99 of how late polls went
   * out; polls awaiting their answer; late payments parked in the database by this worker, payments whose polls keep
   * answering a definite error, 429s answered.
   */
  stats(): {
    held: number;
    viaPage: number;
    late: number;
    inFlight: number;
    polls: number;
    latenessP99Ms: number;
    latenessMaxMs: number;
    parked: number;
    erring: number;
    rateLimited: number;
    outages: number;
    sweeps: number;
  } {
    const sorted = [...this.lateness].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    let viaPage = 0;
    let late = 0;
    let erring = 0;
    let inFlight = 0;
    for (const e of this.entries.values()) {
      if (e.inFlight) inFlight++;
      if (e.viaPage) viaPage++;
      if (e.late) late++;
      if (e.failures >= ERRORS_LOGGED_AT) erring++;
    }
    return {
      held: this.entries.size,
      viaPage,
      late,
      inFlight,
      polls: this.polls,
      latenessP99Ms: at(0.99),
      latenessMaxMs: at(1),
      parked: this.parked,
      erring,
      rateLimited: this.gate.rateLimited,
      outages: this.outages,
      sweeps: this.sweeps,
    };
  }

  /** The area's sweep ran its claim on this worker (link-watch.job.ts). */
  swept(): void {
    this.sweeps++;
  }

  /**
   * One direct poll outside the schedule (a recheck of the payment, recheck.ts), through this worker's gate like
   * every other: while a 429 holds the worker's polls back it is not sent (a fault naming when to ask again), it
   * waits for its slot under LINK_POLL_RATE (up to 5 s, else the same), and a 429 it meets holds the others back.
   */
  async pollOutOfTurn(session: LinkPollSession): Promise<PollAnswer> {
    const held = this.gate.heldForMs();
    if (held > 0) return notSent(`PayWay answered a status poll with 429: this worker's polls are held back`, held);
    const wait = this.gate.reserve();
    if (wait > OUT_OF_TURN_MAX_WAIT_MS) return notSent("this worker's polls are at LINK_POLL_RATE", wait);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    this.polls++;
    const sent = this.gate.stamp();
    const answer = await pollOnce(this.deps.polls, session, this.deps.timeoutMs);
    if (answer.kind === "fault" && answer.retryAfter !== undefined) this.rateLimited(null, answer.retryAfter, sent);
    else if (answer.kind === "status") this.gate.answered();
    return answer;
  }

  /** Shutdown: stops following and makes every lease due now, so another worker claims them at once. */
  async handOver(): Promise<void> {
    const ids = [...this.entries.keys()];
    await this.stop();
    const now = this.deps.clock.now();
    await renewLeases(this.deps.db, ids, now, now).catch((err: unknown) =>
      this.deps.logger.warn({ err }, "could not hand link polls over; their leases run out in 20 s"),
    );
    if (ids.length > 0) this.deps.logger.info({ polls: ids.length }, "link polls handed over");
  }

  async stop(): Promise<void> {
    if (this.renewTimer) clearInterval(this.renewTimer);
    if (this.expiryTimer) clearInterval(this.expiryTimer);
    this.renewTimer = null;
    this.expiryTimer = null;
    const all = [...this.entries.values()];
    this.entries.clear();
    for (const e of all) if (e.timer) clearTimeout(e.timer);
    await Promise.all(all.map((e) => e.page?.close()));
  }

  private async renew(): Promise<void> {
    const now = this.deps.clock.now();
    const until = new Date(now.getTime() + POLL_LEASE_MS);
    await renewLeases(this.deps.db, [...this.entries.keys()], until, now).catch((err: unknown) =>
      this.deps.logger.warn({ err }, "could not renew link poll leases"),
    );
  }

  /**
   * The next poll of a pending payment at a fixed cadence from the last one's due time (a slow answer does not push
   * the rest back), each interval ± 10 %, never after the 180 s; or in `delayMs`. A poll that went out more than half
   * an interval late (held back by the gate: a 429, the rate cap) sets the cadence afresh, so nothing catches up.
   */
  private schedule(entry: Entry, delayMs?: number): void {
    const now = this.deps.clock.now().getTime();
    const from = entry.sentAt - entry.dueAt > this.interval / 2 ? entry.sentAt : entry.dueAt;
    const due =
      delayMs !== undefined
        ? Date.now() + delayMs
        : from + Math.min(jittered(this.interval), Math.max(0, entry.expiresAt - now));
    entry.dueAt = due;
    this.arm(entry, Math.max(0, due - Date.now()), false);
  }

  private arm(entry: Entry, delayMs: number, booked: boolean): void {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = setTimeout(() => void this.run(entry, booked), delayMs);
    entry.timer.unref();
  }

  /** One poll of a payment, once it has a slot at the worker's gate (`booked`: it was given one already). */
  private async run(entry: Entry, booked = false): Promise<void> {
    if (this.entries.get(entry.id) !== entry) return;
    entry.timer = null;
    try {
      if (await this.overdue(entry)) return this.drop(entry);
      if (this.entries.get(entry.id) !== entry) return;
      // A slot booked before a 429 came is not kept: the 429's pause holds it back too.
      const wait = booked && this.gate.heldForMs() === 0 ? 0 : this.gate.reserve();
      if (wait > 0) return await this.holdBack(entry, wait);
      entry.sentAt = Date.now();
      entry.sentStamp = this.gate.stamp();
      this.note(entry.sentAt - entry.dueAt);
      entry.inFlight = true;
      const viaPage = entry.viaPage;
      const answer = await this.poll(entry).finally(() => (entry.inFlight = false));
      if (this.entries.get(entry.id) !== entry) return;
      if (await this.handle(entry, answer)) return this.drop(entry);
      // Its direct poll was just refused by the edge: polled through a page now, in this round, not a late gap later
      // (a late payment would be parked first, and its page with it, and never polled through one).
      if (!viaPage && entry.viaPage) return this.arm(entry, 0, false);
    } catch (err) {
      this.deps.logger.warn({ tx: entry.id, err: (err as Error).message }, "payment-link poll failed");
    }
    if (this.entries.get(entry.id) === entry)
      await this.next(entry).catch((err: unknown) => {
        this.deps.logger.warn({ tx: entry.id, err: (err as Error).message }, "payment-link late watch not parked");
        this.drop(entry);
      });
  }

  /**
   * No slot at the gate for `waitMs` (the rate cap, or a 429's pause): a pending payment waits for its slot (its
   * expiry is kept by the expiry tick meanwhile); a late one whose wait is longer than a lease is parked until then.
   */
  private async holdBack(entry: Entry, waitMs: number): Promise<void> {
    if (entry.late && waitMs > PARK_AFTER_MS)
      return this.park(entry, this.deps.clock.now().getTime() + jittered(waitMs));
    this.arm(entry, waitMs, true);
  }

  /**
   * After a poll: a pending payment's next one at the page's cadence; a late one's by the late cadence
   * (poll-pace.ts lateGapMs; the page's cadence while the payer's app reports processing-payment), the last at the
   * end of the late watch, held in memory if due within a lease, else parked in the database.
   */
  private async next(entry: Entry): Promise<void> {
    if (!entry.late) return this.schedule(entry);
    const now = this.deps.clock.now().getTime();
    const end = entry.expiresAt + this.deps.lateWatchMs;
    if (now >= end) {
      await setLateWatch(this.deps.db, entry.id, null);
      return this.drop(entry);
    }
    const gap = entry.processing ? this.interval : lateGapMs(now - entry.expiresAt, this.interval);
    const wait = Math.min(jittered(gap), end - now);
    if (wait <= PARK_AFTER_MS) return this.schedule(entry, wait);
    await this.park(entry, now + wait);
  }

  /** Leaves memory until `at` (the service's clock): next_check_at says when, and any worker's sweep claims it then. */
  private async park(entry: Entry, at: number): Promise<void> {
    // Written before the entry leaves memory: whoever sees it gone (a stats reader, a test) reads when it is due.
    await setLateWatch(this.deps.db, entry.id, new Date(at));
    this.drop(entry);
    this.parked++;
  }

  /** The late watch is over (true: nothing is left to do), or the 180 s are (→ EXPIRED, watched late from now). */
  private async overdue(entry: Entry): Promise<boolean> {
    const { db, clock, lateWatchMs } = this.deps;
    const now = clock.now().getTime();
    if (entry.late) {
      if (now <= entry.expiresAt + lateWatchMs) return false;
      await setLateWatch(db, entry.id, null);
      return true;
    }
    if (now < entry.expiresAt) return false;
    return !(await this.expire(entry));
  }

  /** Its move to EXPIRED, begun once however many get there (retried by the next one if it threw). */
  private expire(entry: Entry): Promise<boolean> {
    entry.expiring ??= this.toExpired(entry).catch((err: unknown) => {
      entry.expiring = null;
      throw err;
    });
    return entry.expiring;
  }

  /** EXPIRED at its 180 s, and the late watch from now: true while it goes on (the payment is EXPIRED, watch on). */
  private async toExpired(entry: Entry): Promise<boolean> {
    const { store, db, clock, lateWatchMs } = this.deps;
    const now = clock.now().getTime();
    const watchUntil = lateWatchMs > 0 ? new Date(now + POLL_LEASE_MS) : null;
    const r = await store.transition({
      id: entry.id,
      to: "EXPIRED",
      event: "payment.expired",
      nextCheckAt: watchUntil,
    });
    // Expired already by a read or the sweep: the late watch is this worker's all the same.
    if (!r.won && r.tx.status === "EXPIRED") await setLateWatch(db, entry.id, watchUntil);
    if (r.tx.status !== "EXPIRED" || watchUntil === null) return false;
    entry.late = true;
    return true;
  }

  /**
   * Every EXPIRY_TICK_MS: payments past their 180 s whose poll is held up — waiting for an answer (an API down or
   * slow: up to the poll timeout), or for a slot at the gate — are expired now, not when their poll comes back.
   */
  private expireHeldUp(): void {
    const now = this.deps.clock.now().getTime();
    for (const e of this.entries.values()) {
      if (e.late || e.expiring !== null || e.expiresAt > now) continue;
      this.expire(e)
        .then((watched) => {
          if (!watched) this.drop(e);
        })
        .catch((err: unknown) =>
          this.deps.logger.warn({ tx: e.id, err: (err as Error).message }, "payment-link expiry failed"),
        );
    }
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
    if (answer.kind === "fault") return this.fault(entry, answer);
    // A held page's answer goes around the worker's refused polls: only the worker's own says they pass again.
    if (!entry.viaPage) {
      this.deps.refusals.answered("poll");
      this.edgeRefused.delete(configKey(entry.owner));
    }
    this.gate.answered();
    if (entry.failures >= ERRORS_LOGGED_AT)
      this.deps.logger.info({ tx: entry.id, errors: entry.failures }, "payment-link status poll answered again");
    entry.failures = 0;
    entry.pageRefusals = 0;
    const s = answer.status;
    entry.processing = s.action === "processing-payment";
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
    // What the payer's app reported is not known now: the late cadence, not the page's, until a poll says again.
    entry.processing = false;
    this.deps.refusals.refusedBy(entry.viaPage ? "the status poll of a held page" : "the status poll", refusal, "poll");
    if (refusal.kind === "page") return this.pageRefused(entry, detail);
    if (!entry.viaPage) {
      this.edgeRefused.set(configKey(entry.owner), Date.now());
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

  /**
   * A poll with no usable answer never ends the payment (docs/decisions/0189-link-outages-never-fail-a-payment.md):
   * an outage is waited out, and so is a definite error (another 4xx, a refusal in the API's JSON) — only the
   * page's own decline fails a payment, and one that cannot be read might be paid. A run of definite errors is
   * logged once; a pending payment still ends EXPIRED at its 180 s and its late watch goes on. A 429 holds back
   * every poll of this worker for its Retry-After.
   */
  private fault(entry: Entry, answer: Extract<PollAnswer, { kind: "fault" }>): boolean {
    // A stale processing-payment would keep a late payment at the page's cadence through a whole outage.
    entry.processing = false;
    if (answer.retryAfter !== undefined) this.rateLimited(entry.id, answer.retryAfter, entry.sentStamp);
    if (answer.outage) {
      this.outages++;
      return false;
    }
    entry.failures++;
    if (entry.failures === ERRORS_LOGGED_AT)
      this.deps.logger.warn(
        { tx: entry.id, late: entry.late, detail: answer.detail },
        `payment-link status poll answered an error ${ERRORS_LOGGED_AT} times in a row: not a decline, so the ` +
          "payment is not failed; it is polled on (EXPIRED at its 180 s, then its late watch)",
      );
    return false;
  }

  /** A 429: every poll of this worker waits for its Retry-After (or the backoff); said once per hold. */
  private rateLimited(tx: string | null, retryAfter: string | null, sentStamp: number): void {
    const wasHeld = this.gate.heldUntil !== null;
    const waitMs = this.gate.pause(retryAfterMs(retryAfter, Date.now()), sentStamp);
    if (!wasHeld)
      this.deps.logger.warn(
        { tx, retryAfter, waitMs },
        "PayWay answered a status poll with 429: this worker's polls are held back",
      );
  }

  /** Whether the edge refused this configuration's direct polls here lately (EDGE_REMEMBERED_MS). */
  private edgeRefuses(owner: PageOwner): boolean {
    const at = this.edgeRefused.get(configKey(owner));
    if (at === undefined) return false;
    if (Date.now() - at < EDGE_REMEMBERED_MS) return true;
    this.edgeRefused.delete(configKey(owner));
    return false;
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
      upstream: { approvedAt: clock.now().toISOString(), ...(receiptUrl === null ? {} : { receiptUrl }) },
    };
    // SUCCESS only when the QR paid is what was asked; else held (approval-check.ts). PayWay states no paid figures.
    const now = clock.now();
    let r = await recordApproval(store, entry.late ? { ...change, late: true } : change, now);
    // Declared expired meanwhile (a read, the sweep): the approval is a late payment.
    if (!r.won && r.tx.status === "EXPIRED") r = await recordApproval(store, { ...change, late: true }, now);
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

/** A poll out of turn not sent: an outage-like fault saying when to ask again. */
function notSent(why: string, waitMs: number): PollAnswer {
  const at = new Date(Date.now() + waitMs).toISOString();
  return {
    kind: "fault",
    detail: `not sent: ${why} until ${at}; ask again in ${Math.ceil(waitMs / 1000)} s`,
    outage: true,
  };
}

function configKey(owner: PageOwner): string {
  return `${owner.merchant}\n${owner.config}`;
}
