import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import { toDate, toDateOrNull } from "../db/sql.js";
import type { Logger } from "../logger.js";
import { logWebhookAttempt } from "../logs/activity.js";
import type { Metrics } from "../ops/metrics.js";
import { retryDelayMs } from "./backoff.js";
import { deliveryBody, deliveryHeaders } from "./signing.js";
import { request, type Agent } from "undici";
import { egressAgent, isEgressRefusal, REFUSED_TEXT, type EgressPolicy } from "../upstreams/egress.js";
import type { WebhookEndpointService } from "./endpoint-service.js";
import { Batcher, refusedByDatabase } from "../db/batcher.js";
import { headerLines, keepBody, type HeaderLine } from "./attempt-record.js";

export interface DispatcherOptions {
  timeoutMs: number;
  retryForMs: number;
  disableAfterMs: number;
  /** Which addresses a delivery may connect to (upstreams/egress.ts), enforced at connect time. */
  egress: EgressPolicy;
  /** How long a claimed delivery is leased to this process before another may take it. */
  leaseMs?: number;
  maxInFlight?: number;
}

/** What the delivery log keeps of an attempt besides status and latency (attempt-record.ts). */
interface Exchange {
  requestHeaders: HeaderLine[];
  responseHeaders: HeaderLine[] | null;
  responseBody: string | null;
  responseTruncated: boolean;
}

interface Delivered extends Exchange {
  deliveryId: string;
  endpointId: string;
  at: Date;
  status: number;
  latencyMs: number;
  attempts: number;
}

interface Claimed {
  id: string;
  attempts: number;
  createdAt: Date;
  /** When an operator last asked for it again: the retry window runs from the later of the two. */
  redeliveredAt: Date | null;
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
 * How long a claim waits for more committed events, and a delivered attempt's record for more: one statement
 * per ~20 ms instead of one per event or two (a few per cent of the database work of a payment each, at 200/s).
 * Invisible beside a webhook's own round trip and the monitor's interval.
 */
const GATHER_MS = 20;

/**
 * At-least-once delivery from the outbox's delivery rows. Due rows are claimed with SKIP LOCKED and leased,
 * so several workers share the work and a crash only delays a delivery until its lease ends. Each send is
 * independent: a slow endpoint holds only its own requests.
 */
export class WebhookDispatcher {
  private inFlight = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private soon: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly agent: Agent;
  /**
   * Successful attempts are recorded together (db/batcher.ts: alone when the database is idle, grouped while a
   * statement is in flight): the attempt row, the delivery marked delivered and the endpoint no longer failing,
   * for many deliveries in one statement (atomic on its own).
   */
  private readonly delivered = new Batcher<Delivered, void>((items) => this.recordDelivered(items), {
    lanes: 2,
    maxBatch: 64,
    refused: refusedByDatabase,
    lingerMs: GATHER_MS,
  });

  constructor(
    private readonly db: Db,
    private readonly endpoints: WebhookEndpointService,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    private readonly opts: DispatcherOptions,
  ) {
    this.agent = egressAgent(opts.egress, { connectTimeoutMs: opts.timeoutMs });
  }

  /** Run a pass now (the recurring job; events committed in this process use kickSoon()). */
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

  /**
   * A pass in ~20 ms (for an event committed in this process): the events committed meanwhile are claimed by the
   * same statement. Not used by the recurring job, which must not hold its lock while waiting.
   */
  kickSoon(): void {
    if (this.stopped || this.soon !== null) return;
    this.soon = setTimeout(() => {
      this.soon = null;
      void this.kick().catch((err: unknown) => this.logger.warn({ err }, "webhook dispatch failed"));
    }, GATHER_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.soon !== null) clearTimeout(this.soon);
    await this.running;
    const until = Date.now() + 10_000;
    while (this.inFlight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    await this.agent.close().catch(() => undefined);
  }

  private async pass(): Promise<void> {
    const room = (this.opts.maxInFlight ?? 200) - this.inFlight;
    if (room <= 0) return;
    const now = this.clock.now();
    const lease = new Date(now.getTime() + (this.opts.leaseMs ?? this.opts.timeoutMs + 20_000));
    // Claim and read in one statement: the dispatcher's throughput is bounded by database round trips, not CPU.
    const rows = await this.db.query<Record<string, unknown>>(
      `with due as (
         select d.id from webhook_delivery d
         where d.state = 'pending' and d.next_attempt_at <= ?
         order by d.next_attempt_at limit ? for update skip locked),
       claimed as (
         update webhook_delivery d set next_attempt_at = ? from due where d.id = due.id
         returning d.id, d.attempts, d.created_at, d.redelivered_at, d.event_ref, d.endpoint_ref)
       select c.id, c.attempts, c.created_at, c.redelivered_at, c.event_ref, c.endpoint_ref, e.type,
         e.created_at as event_created_at, e.payload, w.url, w.secret_enc, w.previous_secret_enc,
         w.previous_secret_expires_at, w.failing_since, w.enabled
       from claimed c join transaction_event e on e.id = c.event_ref join webhook_endpoint w on w.id = c.endpoint_ref`,
      [now, Math.min(room, 100), lease],
    );
    for (const d of rows) {
      if (d.enabled === false) {
        await this.db.query(
          `update webhook_delivery set state = 'failed', last_error = 'endpoint disabled' where id = ?`,
          [d.id],
        );
        continue;
      }
      const claimed: Claimed = {
        id: d.id as string,
        attempts: Number(d.attempts),
        createdAt: toDate(d.created_at),
        redeliveredAt: toDateOrNull(d.redelivered_at),
        eventId: d.event_ref as string,
        eventType: d.type as string,
        eventCreatedAt: toDate(d.event_created_at),
        payload: d.payload,
        endpointId: d.endpoint_ref as string,
        url: d.url as string,
        secretEnc: d.secret_enc as string,
        previousSecretEnc: (d.previous_secret_enc as string | null) ?? null,
        previousSecretExpiresAt: toDateOrNull(d.previous_secret_expires_at),
        failingSince: toDateOrNull(d.failing_since),
      };
      this.inFlight++;
      void this.send(claimed).finally(() => this.inFlight--);
    }
  }

  private async send(c: Claimed): Promise<void> {
    const body = deliveryBody(c.eventId, c.eventType, c.eventCreatedAt, c.payload);
    const ts = Math.floor(this.clock.now().getTime() / 1000);
    const secrets = this.endpoints.activeSecrets(c);
    const headers = deliveryHeaders(secrets, ts, body, { id: c.eventId, type: c.eventType });
    // Redacted wherever an endpoint might echo them: the secrets, and the signatures made with them.
    const hidden = [...secrets, ...headers["x-signature"].split(" ").map((v) => v.slice(3))];
    const exchange: Exchange = {
      requestHeaders: headerLines(headers, hidden),
      responseHeaders: null,
      responseBody: null,
      responseTruncated: false,
    };
    const started = performance.now();
    let status: number | null = null;
    let error: string | null = null;
    try {
      // The agent resolves the name once, checks every address and connects to a checked one. `request`, not
      // `fetch`: a quarter of the CPU per delivery (docs/decisions/0148-webhook-dispatcher-posts-with-request.md),
      // and it never follows a redirect (a 3xx is an answer, recorded as a failure like any non-2xx).
      const res = await request(c.url, {
        dispatcher: this.agent,
        method: "POST",
        signal: AbortSignal.timeout(this.opts.timeoutMs),
        headers,
        body,
      });
      status = res.statusCode;
      exchange.responseHeaders = headerLines(res.headers, hidden);
      const kept = await keepBody(res.body, hidden).catch(() => null);
      if (kept !== null) {
        exchange.responseBody = kept.text;
        exchange.responseTruncated = kept.truncated;
      }
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (err) {
      const e = err as Error & { code?: string; cause?: { code?: string } };
      // A refused target gets one text whatever the reason (closed port, no such name, private address):
      // the delivery log must not tell a key holder what exists on the service's network.
      error = isEgressRefusal(err)
        ? REFUSED_TEXT
        : e.name === "TimeoutError"
          ? `timeout after ${this.opts.timeoutMs} ms`
          : (e.code ?? e.cause?.code ?? e.message).slice(0, 300);
    }
    const latencyMs = Math.round(performance.now() - started);
    await this.record(c, status, error, latencyMs, exchange).catch((err) =>
      this.logger.error({ err, delivery: c.id }, "could not record webhook attempt"),
    );
  }

  private async recordDelivered(items: Delivered[]): Promise<void[]> {
    const col = <T>(f: (d: Delivered) => T) => items.map(f);
    await this.db.query(
      `with input as (
         select * from unnest(?::text[], ?::text[], ?::timestamptz[], ?::int[], ?::int[], ?::int[], ?::text[],
           ?::text[], ?::text[], ?::bool[])
           as v(delivery_id, endpoint_id, at, status, latency_ms, attempts, request_headers, response_headers,
             response_body, response_truncated)),
       attempt as (
         insert into webhook_attempt (delivery_ref, attempted_at, status_code, latency_ms, error, request_headers,
           response_headers, response_body, response_truncated)
         select delivery_id, at, status, latency_ms, null, request_headers::jsonb, response_headers::jsonb,
           response_body, response_truncated from input),
       delivery as (
         update webhook_delivery d set state = 'delivered', attempts = v.attempts, delivered_at = v.at,
           last_status_code = v.status, last_error = null, next_attempt_at = null
         from input v where d.id = v.delivery_id)
       update webhook_endpoint w set failing_since = null
       where w.id in (select endpoint_id from input) and w.failing_since is not null`,
      [
        col((d) => d.deliveryId),
        col((d) => d.endpointId),
        col((d) => d.at),
        col((d) => d.status),
        col((d) => d.latencyMs),
        col((d) => d.attempts),
        col((d) => JSON.stringify(d.requestHeaders)),
        col((d) => (d.responseHeaders === null ? null : JSON.stringify(d.responseHeaders))),
        col((d) => d.responseBody),
        col((d) => d.responseTruncated),
      ],
      "pqr_webhook_delivered_v2",
    );
    return items.map(() => undefined);
  }

  private async record(
    c: Claimed,
    status: number | null,
    error: string | null,
    latencyMs: number,
    exchange: Exchange,
  ): Promise<void> {
    const now = this.clock.now();
    const attempts = c.attempts + 1;
    this.metrics.webhookAttempts.inc({ outcome: error === null ? "delivered" : "failed" });
    const line = { eventType: c.eventType, eventId: c.eventId, endpointId: c.endpointId, url: c.url, status, error };
    if (error === null) {
      logWebhookAttempt(this.logger, { ...line, ms: latencyMs, attempt: attempts, retryInMs: null });
      await this.delivered.add({
        deliveryId: c.id,
        endpointId: c.endpointId,
        at: now,
        status: status as number,
        latencyMs,
        attempts,
        ...exchange,
      });
      return;
    }
    let retryInMs: number | null = null;
    await this.db.transaction(async (q) => {
      await q(
        `insert into webhook_attempt (delivery_ref, attempted_at, status_code, latency_ms, error, request_headers,
           response_headers, response_body, response_truncated) values (?,?,?,?,?,?::jsonb,?::jsonb,?,?)`,
        [
          c.id,
          now,
          status,
          latencyMs,
          error,
          JSON.stringify(exchange.requestHeaders),
          exchange.responseHeaders === null ? null : JSON.stringify(exchange.responseHeaders),
          exchange.responseBody,
          exchange.responseTruncated,
        ],
      );
      const next = new Date(now.getTime() + retryDelayMs(attempts));
      // The window runs from the delivery's creation, or from the operator's redelivery when there was one.
      const windowStart = Math.max(c.createdAt.getTime(), c.redeliveredAt?.getTime() ?? 0);
      const giveUp = next.getTime() - windowStart > this.opts.retryForMs;
      retryInMs = giveUp ? null : next.getTime() - now.getTime();
      await q(
        `update webhook_delivery set state = ?, attempts = ?, last_status_code = ?, last_error = ?, next_attempt_at = ? where id = ?`,
        [giveUp ? "failed" : "pending", attempts, status, error, giveUp ? null : next, c.id],
      );
      await q(`update webhook_endpoint set failing_since = coalesce(failing_since, ?) where id = ?`, [
        now,
        c.endpointId,
      ]);
      const failingSince = c.failingSince ?? now;
      if (now.getTime() - failingSince.getTime() >= this.opts.disableAfterMs) {
        await q(`update webhook_endpoint set enabled = false, disabled_reason = ? where id = ? and enabled`, [
          `disabled automatically at ${now.toISOString()}: every delivery failed since ${failingSince.toISOString()} (last: ${error})`,
          c.endpointId,
        ]);
      }
    });
    logWebhookAttempt(this.logger, { ...line, ms: latencyMs, attempt: attempts, retryInMs });
  }
}
