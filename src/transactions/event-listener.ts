import pg from "pg";
import type { Logger } from "../logger.js";
import type { EventBus } from "./event-bus.js";
import { NOTIFY_CHANNEL, type TransactionStore } from "./transition.js";

/**
 * Cross-process fan-out (DESIGN.md "Scaling out"): LISTEN for event ids committed by any process, load the
 * outbox row, publish in-process. Reconnects with backoff; after a reconnect it replays from the last seen
 * sequence so nothing committed while disconnected is missed.
 */
export class EventListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private lastSeq = "0";
  private retryMs = 250;
  private readonly notified: string[] = [];
  private loading = false;

  constructor(
    private readonly url: string,
    private readonly store: TransactionStore,
    private readonly bus: EventBus,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const rows = await this.store.latestSeq();
    this.lastSeq = rows;
    await this.connect();
    this.bus.subscribe((e) => {
      if (BigInt(e.seq) > BigInt(this.lastSeq)) this.lastSeq = e.seq;
    });
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.url });
    client.on("error", (err) => this.logger.warn({ err }, "event listener connection error"));
    client.on("end", () => {
      if (this.client === client) this.client = null;
      if (!this.stopped) setTimeout(() => void this.reconnect(), this.retryMs).unref();
    });
    client.on("notification", (msg) => {
      if (msg.channel === NOTIFY_CHANNEL && msg.payload) this.deliver(msg.payload);
    });
    await client.connect();
    await client.query(`listen ${NOTIFY_CHANNEL}`);
    this.client = client;
    this.retryMs = 250;
  }

  private async reconnect(): Promise<void> {
    try {
      await this.connect();
      await this.catchUp();
    } catch (err) {
      this.retryMs = Math.min(this.retryMs * 2, 5000);
      this.logger.warn({ err }, "event listener reconnect failed");
      if (!this.stopped) setTimeout(() => void this.reconnect(), this.retryMs).unref();
    }
  }

  private async catchUp(): Promise<void> {
    for (const e of await this.store.eventsAfter(this.lastSeq, 1000)) this.bus.publish(e);
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
    await this.client?.end().catch(() => undefined);
  }
}
