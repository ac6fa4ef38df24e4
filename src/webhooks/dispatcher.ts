import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import { toDate, toDateOrNull } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../ops/metrics.js";
import { retryDelayMs } from "./backoff.js";
import { signatureHeader } from "./signing.js";
import { resolvesToPrivate } from "./url-policy.js";
import type { WebhookEndpointService } from "./endpoint-service.js";

export interface DispatcherOptions {
  timeoutMs: number;
  retryForMs: number;
  disableAfterMs: number;
  allowPrivateUrls: boolean;
  /** How long a claimed delivery is leased to this process before another may take it. */
  leaseMs?: number;
  maxInFlight?: number;
}

interface Claimed {
  id: string;
  attempts: number;
  createdAt: Date;
  eventId: string;
  eventType: string;
  eventCreatedAt: Date;
  payload: unknown;
  endpointId: string;
  url: string;
  secretEnc: string;
  previousSecretEnc: string | null;
  previousSecretExpiresAt: Date | null;
  failingSince: Date | null;
}

/**
 * At-least-once delivery from the outbox's delivery rows. Due rows are claimed with SKIP LOCKED and leased,
 * so several workers share the work and a crash only delays a delivery until its lease ends. Each send is
 * independent: a slow endpoint holds only its own requests.
 */
export class WebhookDispatcher {
  private inFlight = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly endpoints: WebhookEndpointService,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    private readonly opts: DispatcherOptions,
  ) {}

  /** Run a pass now (called on every committed event in this process, and by the recurring job). */
  kick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.pass();
        } while (this.again && !this.stopped);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    const until = Date.now() + 10_000;
    while (this.inFlight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  }

  private async pass(): Promise<void> {
    const room = (this.opts.maxInFlight ?? 200) - this.inFlight;
    if (room <= 0) return;
    const now = this.clock.now();
    const lease = new Date(now.getTime() + (this.opts.leaseMs ?? this.opts.timeoutMs + 20_000));
    const rows = await this.db.query<Record<string, unknown>>(
      `with due as (
         select d.id from webhook_delivery d
         where d.state = 'pending' and d.next_attempt_at <= ?
         order by d.next_attempt_at limit ? for update skip locked)
       update webhook_delivery d set next_attempt_at = ? from due where d.id = due.id
       returning d.id, d.attempts, d.created_at, d.event_ref, d.endpoint_ref`,
      [now, Math.min(room, 100), lease],
    );
    if (rows.length === 0) return;
    const details = await this.db.query<Record<string, unknown>>(
      `select d.id, e.type, e.created_at as event_created_at, e.payload, w.url, w.secret_enc, w.previous_secret_enc, w.previous_secret_expires_at, w.failing_since, w.enabled
       from webhook_delivery d join transaction_event e on e.id = d.event_ref join webhook_endpoint w on w.id = d.endpoint_ref
       where d.id in (${rows.map(() => "?").join(",")})`,
      rows.map((r) => r.id),
    );
    const byId = new Map(details.map((d) => [d.id as string, d]));
    for (const r of rows) {
      const d = byId.get(r.id as string);
      if (!d) continue;
      if (d.enabled === false) {
        await this.db.query(`update webhook_delivery set state = 'failed', last_error = 'endpoint disabled' where id = ?`, [r.id]);
        continue;
      }
      const claimed: Claimed = {
        id: r.id as string, attempts: Number(r.attempts), createdAt: toDate(r.created_at), eventId: r.event_ref as string,
        eventType: d.type as string, eventCreatedAt: toDate(d.event_created_at), payload: d.payload, endpointId: r.endpoint_ref as string,
        url: d.url as string, secretEnc: d.secret_enc as string, previousSecretEnc: (d.previous_secret_enc as string | null) ?? null,
        previousSecretExpiresAt: toDateOrNull(d.previous_secret_expires_at), failingSince: toDateOrNull(d.failing_since),
      };
      this.inFlight++;
      void this.send(claimed).finally(() => this.inFlight--);
    }
  }

  /** The exact bytes sent; redeliveries of one event carry the same id and body. */
  static body(eventId: string, type: string, createdAt: Date, data: unknown): string {
    return JSON.stringify({ id: eventId, type, createdAt: createdAt.toISOString(), data });
  }

  private async send(c: Claimed): Promise<void> {
    const body = WebhookDispatcher.body(c.eventId, c.eventType, c.eventCreatedAt, c.payload);
    const ts = Math.floor(this.clock.now().getTime() / 1000);
    const started = performance.now();
    let status: number | null = null;
    let error: string | null = null;
    try {
      if (!this.opts.allowPrivateUrls && (await resolvesToPrivate(c.url))) throw new Error("refused: the URL resolves to a private address");
      const res = await fetch(c.url, {
        method: "POST",
        redirect: "manual",
        signal: AbortSignal.timeout(this.opts.timeoutMs),
        headers: {
          "content-type": "application/json",
          "user-agent": "payment-qr-webhooks/1",
          "x-timestamp": String(ts),
          "x-signature": signatureHeader(this.endpoints.activeSecrets(c), ts, body),
          "x-event-id": c.eventId,
          "x-event-type": c.eventType,
        },
        body,
      });
      status = res.status;
      await res.arrayBuffer().catch(() => undefined);
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      error = e.name === "TimeoutError" ? `timeout after ${this.opts.timeoutMs} ms` : (e.cause?.code ?? e.message).slice(0, 300);
    }
    const latencyMs = Math.round(performance.now() - started);
    await this.record(c, status, error, latencyMs).catch((err) => this.logger.error({ err, delivery: c.id }, "could not record webhook attempt"));
  }

  private async record(c: Claimed, status: number | null, error: string | null, latencyMs: number): Promise<void> {
    const now = this.clock.now();
    const attempts = c.attempts + 1;
    this.metrics.webhookAttempts.inc({ outcome: error === null ? "delivered" : "failed" });
    await this.db.transaction(async (q) => {
      await q(`insert into webhook_attempt (delivery_ref, attempted_at, status_code, latency_ms, error) values (?,?,?,?,?)`, [c.id, now, status, latencyMs, error]);
      if (error === null) {
        await q(`update webhook_delivery set state = 'delivered', attempts = ?, delivered_at = ?, last_status_code = ?, last_error = null, next_attempt_at = null where id = ?`, [attempts, now, status, c.id]);
        await q(`update webhook_endpoint set failing_since = null where id = ? and failing_since is not null`, [c.endpointId]);
        return;
      }
      const next = new Date(now.getTime() + retryDelayMs(attempts));
      const giveUp = next.getTime() - c.createdAt.getTime() > this.opts.retryForMs;
      await q(
        `update webhook_delivery set state = ?, attempts = ?, last_status_code = ?, last_error = ?, next_attempt_at = ? where id = ?`,
        [giveUp ? "failed" : "pending", attempts, status, error, giveUp ? null : next, c.id],
      );
      await q(`update webhook_endpoint set failing_since = coalesce(failing_since, ?) where id = ?`, [now, c.endpointId]);
      const failingSince = c.failingSince ?? now;
      if (now.getTime() - failingSince.getTime() >= this.opts.disableAfterMs) {
        await q(
          `update webhook_endpoint set enabled = false, disabled_reason = ? where id = ? and enabled`,
          [`disabled automatically at ${now.toISOString()}: every delivery failed since ${failingSince.toISOString()} (last: ${error})`, c.endpointId],
        );
      }
    });
    if (error !== null) this.logger.info({ delivery: c.id, endpoint: c.endpointId, attempts, error }, "webhook attempt failed");
  }
}
