import { randomBytes } from "node:crypto";
import type { Orm } from "../db/orm.js";
import type { Db } from "../db/sql.js";
import { toDate, toDateOrNull } from "../db/sql.js";
import type { Clock } from "../clock.js";
import type { SecretBox } from "../auth/secret-box.js";
import { rewriteSealed, type SealedColumn } from "../auth/stored-secrets.js";
import { AppError } from "../errors.js";
import { ApiKey } from "../auth/api-key.entity.js";
import { EVENT_TYPES } from "../transactions/transaction-event.entity.js";
import { WebhookEndpoint } from "./webhook-endpoint.entity.js";
import { checkTargetUrl, resolvesAllowed, type EgressPolicy } from "../upstreams/egress.js";
import { newId } from "../ids.js";
import type { HeaderLine } from "./attempt-record.js";
import { deliveryBody } from "./signing.js";
import { Checker, checkArgument, refuse } from "../validation/checker.js";
import { oneOf, wholeNumber } from "../validation/rules.js";
import { groupedBy } from "../db/grouped.js";

/**
 * A delivery row with what its view needs of its event (`d`: webhook_delivery, `e`: transaction_event), every column
 * named: the transaction's deliveries are read by a prepared statement.
 */
const DELIVERY_COLUMNS = `d.id, d.event_ref, d.endpoint_ref, d.state, d.attempts, d.next_attempt_at, d.last_status_code,
  d.last_error, d.delivered_at, d.created_at, d.redelivered_at, e.type as event_type, e.transaction_ref,
  e.created_at as event_created_at, e.payload`;
/** How many deliveries one read returns: 1 to 200. */
const deliveriesFirst = (first: number) => Math.min(Math.max(first, 1), 200);

export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  transactionId: string;
  endpointId: string;
  state: string;
  attempts: number;
  nextAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: Date | null;
  createdAt: Date;
  /** The last time an operator asked for it again. */
  redeliveredAt: Date | null;
  /** The exact bytes every attempt sent: the event's delivery body (signing.ts). */
  requestBody: string;
  log: AttemptView[];
}

export interface AttemptView {
  attemptedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** Headers sent, `name: value` a line, the signature redacted; null for attempts made before the log kept them. */
  requestHeaders: string | null;
  responseHeaders: string | null;
  /** The first 4 KB of the answer's body (credentials redacted). */
  responseBody: string | null;
  responseTruncated: boolean;
}

/** Stored header lines as an HTTP header block. */
const headerBlock = (v: unknown): string | null =>
  Array.isArray(v) ? (v as HeaderLine[]).map((l) => `${l.name}: ${l.value}`).join("\n") : null;

/**
 * The endpoint's signing secrets, sealed to its row. Both columns share one purpose: rotation moves the current
 * secret into `previous_secret_enc` of the same row.
 */
/** How long an old secret keeps signing after a rotation: up to a week, in minutes. */
const OVERLAP_MAX = 7 * 24 * 60;
const OVERLAP = wholeNumber(0, OVERLAP_MAX, `must be a whole number from 0 to ${OVERLAP_MAX}`);

export const ENDPOINT_SECRETS: readonly SealedColumn[] = [
  { table: "webhook_endpoint", column: "secret_enc", purpose: "webhook-endpoint-secret" },
  { table: "webhook_endpoint", column: "previous_secret_enc", purpose: "webhook-endpoint-secret" },
];

/** Webhook endpoints per API key: registration, filters, enable/disable, secret rotation, the delivery log, redelivery. */
export class WebhookEndpointService {
  /** Endpoint secrets already opened, by purpose, row and sealed text (activeSecrets). */
  private readonly opened = new Map<string, string>();

  constructor(
    private readonly orm: Orm,
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly egress: EgressPolicy,
  ) {}

  static newSecret(): string {
    return `whsec_${randomBytes(24).toString("base64url")}`;
  }

  /**
   * The URL's shape, then (strict mode) where its name resolves now: a name that leads to a loopback, private or
   * reserved address is refused here rather than retried for a day. One that does not resolve yet is accepted:
   * every delivery resolves it again and is refused if it still leads nowhere public.
   */
  private async validate(url: string | undefined, events: string[] | undefined): Promise<void> {
    const c = new Checker();
    if (url !== undefined) {
      const problem = checkTargetUrl(url, this.egress);
      if (problem) c.fail("url", problem);
      else if (!(await resolvesAllowed(url, this.egress, true)))
        c.fail("url", "must not resolve to a loopback, private or reserved address");
    }
    const known = `; known: ${EVENT_TYPES.join(", ")}`;
    for (const e of events ?? []) c.check("events", e, oneOf(EVENT_TYPES, `unknown event kind "${e}"${known}`));
    c.done("Invalid webhook endpoint");
  }

  async create(input: {
    apiKeyId: string;
    url: string;
    events?: string[];
    secret?: string;
  }): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    await this.validate(input.url, input.events);
    const em = this.orm.em.fork();
    if ((await em.findOne(ApiKey, { id: input.apiKeyId })) === null)
      throw refuse("apiKeyId", "not found", "API key not found");
    const secret = input.secret ?? WebhookEndpointService.newSecret();
    const endpoint = Object.assign(new WebhookEndpoint(), {
      apiKeyRef: input.apiKeyId,
      url: input.url,
      events: [...new Set(input.events ?? [])],
    });
    endpoint.secretEnc = this.box.seal(secret, "webhook-endpoint-secret", endpoint.id);
    await em.persist(endpoint).flush();
    return { endpoint, secret };
  }

  async update(id: string, input: { url?: string; events?: string[]; enabled?: boolean }): Promise<WebhookEndpoint> {
    await this.validate(input.url, input.events);
    const em = this.orm.em.fork();
    const ep = await em.findOne(WebhookEndpoint, { id });
    if (ep === null) throw new AppError("NOT_FOUND", "Webhook endpoint not found");
    if (input.url !== undefined) ep.url = input.url;
    if (input.events !== undefined) ep.events = [...new Set(input.events)];
    if (input.enabled !== undefined) {
      ep.enabled = input.enabled;
      if (input.enabled) {
        ep.disabledReason = null;
        ep.failingSince = null;
      } else ep.disabledReason ??= "disabled by operator";
    }
    await em.flush();
    return ep;
  }

  /** A new secret; the old one keeps signing (a second v1= value) until the overlap ends. */
  async rotateSecret(id: string, overlapMinutes: number): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    checkArgument("overlapMinutes", overlapMinutes, OVERLAP, `overlapMinutes must be 0 to ${OVERLAP_MAX}`);
    const em = this.orm.em.fork();
    const ep = await em.findOne(WebhookEndpoint, { id });
    if (ep === null) throw new AppError("NOT_FOUND", "Webhook endpoint not found");
    const secret = WebhookEndpointService.newSecret();
    ep.previousSecretEnc = overlapMinutes > 0 ? ep.secretEnc : null;
    ep.previousSecretExpiresAt =
      overlapMinutes > 0 ? new Date(this.clock.now().getTime() + overlapMinutes * 60_000) : null;
    ep.secretEnc = this.box.seal(secret, "webhook-endpoint-secret", ep.id);
    await em.flush();
    return { endpoint: ep, secret };
  }

  async list(apiKeyId?: string): Promise<WebhookEndpoint[]> {
    return this.orm.em
      .fork()
      .find(WebhookEndpoint, apiKeyId ? { apiKeyRef: apiKeyId } : {}, { orderBy: { createdAt: "asc" } });
  }

  /**
   * The secrets that sign a delivery now: the current one, plus the previous one during its overlap. A secret
   * that is not this endpoint's throws SecretUnreadableError (the delivery fails, nothing is signed); one in
   * the legacy format is rewritten bound to the row in the background.
   */
  activeSecrets(ep: {
    endpointId: string;
    secretEnc: string;
    previousSecretEnc: string | null;
    previousSecretExpiresAt: Date | null;
  }): string[] {
    const open = (col: SealedColumn, sealed: string): string => {
      // Every delivery signs with its endpoint's secret: opened once per stored value, not once per delivery
      // (the AES-GCM open was a tenth of a delivery's CPU). Keyed by the sealed text and its row, so a rotation
      // or another row's ciphertext is opened (and checked) afresh.
      const cacheKey = `${col.purpose}\0${ep.endpointId}\0${sealed}`;
      const known = this.opened.get(cacheKey);
      if (known !== undefined) return known;
      const opened = this.box.open(sealed, col.purpose, ep.endpointId);
      if (opened.upgraded === null) {
        if (this.opened.size >= 1000) this.opened.clear();
        this.opened.set(cacheKey, opened.plain);
      }
      if (opened.upgraded !== null)
        void rewriteSealed(this.db, col, ep.endpointId, sealed, opened.upgraded).catch(() => undefined);
      return opened.plain;
    };
    const [current, previous] = ENDPOINT_SECRETS as [SealedColumn, SealedColumn];
    const out = [open(current, ep.secretEnc)];
    if (
      ep.previousSecretEnc &&
      ep.previousSecretExpiresAt &&
      ep.previousSecretExpiresAt.getTime() > this.clock.now().getTime()
    )
      out.push(open(previous, ep.previousSecretEnc));
    return out;
  }

  async deliveries(filter: {
    endpointId?: string;
    eventId?: string;
    transactionId?: string;
    first: number;
  }): Promise<DeliveryView[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: string | undefined) => {
      if (value) {
        where.push(sql);
        params.push(value);
      }
    };
    add("d.endpoint_ref = ?", filter.endpointId);
    add("d.event_ref = ?", filter.eventId);
    add("e.transaction_ref = ?", filter.transactionId);
    const rows = await this.db.query<Record<string, unknown>>(
      `select ${DELIVERY_COLUMNS} from webhook_delivery d join transaction_event e on e.id = d.event_ref
       ${where.length ? `where ${where.join(" and ")}` : ""} order by d.created_at desc, d.id limit ?`,
      [...params, deliveriesFirst(filter.first)],
    );
    return this.views(rows);
  }

  /**
   * The newest `first` deliveries of each of several transactions, in the order asked (a page's rows ask together:
   * graphql/per-request.ts): one statement for the deliveries, an index range per transaction, and one for their
   * attempts.
   */
  async deliveriesOf(transactionIds: readonly string[], first: number): Promise<DeliveryView[][]> {
    const rows = await this.db.query<Record<string, unknown>>(
      `select x.* from unnest(?::text[]) as t(id) cross join lateral (
         select ${DELIVERY_COLUMNS} from transaction_event e join webhook_delivery d on d.event_ref = e.id
         where e.transaction_ref = t.id order by d.created_at desc, d.id limit ?) x
       order by x.transaction_ref, x.created_at desc, x.id`,
      [[...new Set(transactionIds)], deliveriesFirst(first)],
      "pqr_deliveries_of",
    );
    return groupedBy(transactionIds, await this.views(rows), (v) => v.transactionId);
  }

  /** Delivery rows (DELIVERY_COLUMNS) with their attempts (one statement for all of them). */
  private async views(rows: Record<string, unknown>[]): Promise<DeliveryView[]> {
    if (rows.length === 0) return [];
    const attempts = await this.db.query<Record<string, unknown>>(
      `select id, delivery_ref, attempted_at, status_code, latency_ms, error, request_headers, response_headers,
         response_body, response_truncated from webhook_attempt where delivery_ref = any(?::text[]) order by id`,
      [rows.map((r) => r.id)],
      "pqr_delivery_attempts",
    );
    const logs = groupedBy(
      rows.map((r) => r.id),
      attempts,
      (a) => a.delivery_ref,
    );
    return rows.map((r, i) => ({
      id: r.id as string,
      eventId: r.event_ref as string,
      eventType: r.event_type as string,
      transactionId: r.transaction_ref as string,
      endpointId: r.endpoint_ref as string,
      state: r.state as string,
      attempts: Number(r.attempts),
      nextAttemptAt: toDateOrNull(r.next_attempt_at),
      lastStatusCode: (r.last_status_code as number | null) ?? null,
      lastError: (r.last_error as string | null) ?? null,
      deliveredAt: toDateOrNull(r.delivered_at),
      createdAt: toDate(r.created_at),
      redeliveredAt: toDateOrNull(r.redelivered_at),
      requestBody: deliveryBody(r.event_ref as string, r.event_type as string, toDate(r.event_created_at), r.payload),
      log: logs[i].map((a) => ({
        attemptedAt: toDate(a.attempted_at),
        statusCode: (a.status_code as number | null) ?? null,
        latencyMs: Number(a.latency_ms),
        error: (a.error as string | null) ?? null,
        requestHeaders: headerBlock(a.request_headers),
        responseHeaders: headerBlock(a.response_headers),
        responseBody: (a.response_body as string | null) ?? null,
        responseTruncated: a.response_truncated === true,
      })),
    }));
  }

  /**
   * Sends an event to an endpoint again: a new pending delivery, or the existing one re-armed. Its creation time and
   * its attempts so far stay as they were; the next attempt is added to its log, and its retry window runs from now.
   */
  async redeliver(eventId: string, endpointId: string): Promise<DeliveryView> {
    const now = this.clock.now();
    const ok = await this.db.query(
      `select 1 from transaction_event e join webhook_endpoint w on w.api_key_ref = e.api_key_ref where e.id = ? and w.id = ?`,
      [eventId, endpointId],
    );
    if (ok.length === 0) throw new AppError("NOT_FOUND", "No such event for this endpoint");
    await this.db.query(
      `insert into webhook_delivery (id, event_ref, endpoint_ref, state, attempts, next_attempt_at, created_at) values
        (?,?,?,'pending',0,?,?)
       on conflict (event_ref, endpoint_ref) do update set state = 'pending', next_attempt_at =
         excluded.next_attempt_at, redelivered_at = ?`,
      [newId("whd"), eventId, endpointId, now, now, now],
    );
    const [view] = await this.deliveries({ eventId, endpointId, first: 1 });
    return view;
  }
}
