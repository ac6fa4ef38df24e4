import pg from "pg";
import type { Logger } from "../logger.js";
import type { EventBus } from "./event-bus.js";
import { NOTIFY_CHANNEL, type TransactionStore } from "./transition.js";
import { INVALIDATE_CHANNEL, type Invalidations } from "../cache/invalidation.js";

/**
 * Cross-process fan-out (DESIGN.md "Scaling out"): LISTEN for event ids committed by any process, load the
 * outbox row, publish in-process. Reconnects with backoff; after a reconnect it replays from the last seen
 * sequence so nothing committed while disconnected is missed. It also carries cache invalidations (revoked
 * keys, edited merchants) from every process; after a reconnect, when some may have been missed, every cache
 * is cleared.
 */
export class EventListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private lastSeq = "0";
  private retryMs = 250;

  constructor(
    private readonly url: string,
    private readonly store: TransactionStore,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    private readonly invalidations?: Invalidations,
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
      if (msg.channel === NOTIFY_CHANNEL && msg.payload) void this.deliver(msg.payload);
      else if (msg.channel === INVALIDATE_CHANNEL && msg.payload) this.invalidations?.applyPayload(msg.payload);
    });
    await client.connect();
    await client.query(`listen ${NOTIFY_CHANNEL}`);
    await client.query(`listen ${INVALIDATE_CHANNEL}`);
    this.client = client;
    this.retryMs = 250;
  }

  private async reconnect(): Promise<void> {
    try {
      await this.connect();
      this.invalidations?.clearAll();
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

  private async deliver(eventId: string): Promise<void> {
    if (this.bus.hasSeen(eventId)) return;
    try {
      const e = await this.store.eventById(eventId);
      if (e) this.bus.publish(e);
    } catch (err) {
      this.logger.warn({ err, eventId }, "could not load notified event");
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => undefined);
  }
}
