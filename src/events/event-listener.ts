import pg from "pg";
import type { Logger } from "../logger.js";
import type { EventBus } from "./event-bus.js";
import { NOTIFY_CHANNEL, type TransactionStore } from "../transactions/transition.js";
import { notifiedIds } from "../transactions/outbox-sql.js";
import { INVALIDATE_CHANNEL, type Invalidations } from "../cache/invalidation.js";

/**
 * How far before the last seen sequence number a catch-up starts: an event that took a lower number but
 * committed later (a concurrent transaction) is still found. Far more than the events in flight at once
 * (pool size × create batch), and well inside what the bus remembers to drop repeats (10,000 ids).
 */
const REPLAY_MARGIN = 2000n;
const REPLAY_PAGE = 1000;
const MAX_REPLAY_PAGES = 100;

/**
 * Cross-process fan-out (docs/operations.md): LISTEN for event ids committed by any process (a batch of
 * creates notifies its ids in one payload), load the outbox rows, publish in-process. Reconnects with
 * backoff; after a reconnect it replays from a little before the last seen sequence number (events commit
 * out of sequence order when several transactions are in flight; the bus drops the ones already published),
 * so nothing committed while disconnected is missed. It also carries cache invalidations (revoked
 * keys, edited merchants) from every process; after a reconnect, when some may have been missed, every cache
 * is cleared.
 */
export class EventListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private lastSeq = "0";
  /** Events before the start are history, not news: a catch-up never replays below this. */
  private startSeq = 0n;
  private retryMs = 250;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly notified: string[] = [];
  private loading = false;

  constructor(
    private readonly url: string,
    private readonly store: TransactionStore,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    private readonly invalidations?: Invalidations,
  ) {}

  async start(): Promise<void> {
    this.lastSeq = await this.store.latestSeq();
    this.startSeq = BigInt(this.lastSeq);
    await this.connect();
    this.bus.subscribe((e) => {
      if (BigInt(e.seq) > BigInt(this.lastSeq)) this.lastSeq = e.seq;
    });
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    // At most one listening connection: a previous one (if any) is let go first, silently.
    const previous = this.client;
    this.client = null;
    await previous?.end().catch(() => undefined);
    const client = new pg.Client({ connectionString: this.url });
    client.on("error", (err) => this.logger.warn({ err }, "event listener connection error"));
    // Only the connection in use asks for a reconnect when it ends; a failed attempt is retried by reconnect().
    client.on("end", () => {
      if (this.client !== client) return;
      this.client = null;
      this.scheduleReconnect();
    });
    client.on("notification", (msg) => {
      if (msg.channel === NOTIFY_CHANNEL && msg.payload) for (const id of notifiedIds(msg.payload)) this.deliver(id);
      else if (msg.channel === INVALIDATE_CHANNEL && msg.payload) this.invalidations?.applyPayload(msg.payload);
    });
    try {
      await client.connect();
      await client.query(`listen ${NOTIFY_CHANNEL}`);
      await client.query(`listen ${INVALIDATE_CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryMs = 250;
  }

  /** One pending reconnect at a time (every failure used to schedule another: a storm of connections). */
  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer !== null) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.reconnect();
    }, this.retryMs);
    this.retryTimer.unref();
  }

  private async reconnect(): Promise<void> {
    try {
      if (this.client === null) {
        await this.connect();
        this.invalidations?.clearAll();
      }
      await this.catchUp();
    } catch (err) {
      this.retryMs = Math.min(this.retryMs * 2, 5000);
      this.logger.warn({ err }, "event listener reconnect failed");
      this.scheduleReconnect();
    }
  }

  private async catchUp(): Promise<void> {
    const last = BigInt(this.lastSeq);
    const floor = last - REPLAY_MARGIN;
    let after = (floor > this.startSeq ? floor : this.startSeq).toString();
    for (let page = 0; page < MAX_REPLAY_PAGES; page++) {
      const events = await this.store.eventsAfter(after, REPLAY_PAGE);
      for (const e of events) this.bus.publish(e);
      if (events.length < REPLAY_PAGE) return;
      after = events[events.length - 1].seq;
    }
    this.logger.warn(
      { after },
      "event listener catch-up stopped after its page limit; older events reach subscribers only by lastEventId replay",
    );
  }

  private deliver(eventId: string): void {
    if (this.bus.hasSeen(eventId)) return;
    this.notified.push(eventId);
    if (!this.loading) void this.load();
  }

  /**
   * One query at a time loads every id notified meanwhile. Under a burst (or a slow database) a query per
   * notification queued behind the connection pool and fell further behind; batches keep an event's wait to
   * about two query times, and publish in sequence order.
   */
  private async load(): Promise<void> {
    this.loading = true;
    try {
      while (this.notified.length > 0) {
        const ids = this.notified.splice(0, 500).filter((id) => !this.bus.hasSeen(id));
        try {
          for (const e of await this.store.eventsByIds(ids)) this.bus.publish(e);
        } catch (err) {
          this.logger.warn({ err, count: ids.length }, "could not load notified events");
        }
      }
    } finally {
      this.loading = false;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    await this.client?.end().catch(() => undefined);
  }
}
