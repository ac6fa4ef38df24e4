import type { Config } from "./config.js";
import type { Clock } from "./clock.js";
import type { Logger } from "./logger.js";
import type { Db } from "./db/sql.js";
import type { Orm } from "./db/orm.js";
import type { EventBus } from "./transactions/event-bus.js";
import type { TransactionStore } from "./transactions/transition.js";
import type { Authenticator } from "./auth/keys.js";
import type { SecretBox } from "./auth/secret-box.js";
import type { AdminService } from "./admin/admin-service.js";
import type { Metrics } from "./ops/metrics.js";
import type { LiveEvents } from "./transactions/live-events.js";
import type { TransactionQuery } from "./transactions/transaction-query.js";
import type { Idempotency } from "./transactions/idempotency.js";
import type { QrService } from "./qr/qr-service.js";
import type { GatewayService } from "./gateway/gateway-service.js";
import type { LinkService } from "./gateway-link/link-service.js";
import type { WebhookEndpointService } from "./webhooks/endpoint-service.js";
import type { WebhookDispatcher } from "./webhooks/dispatcher.js";

/** Everything a resolver or job may call, built once in app.ts and handed down. */
export interface Services {
  config: Config;
  clock: Clock;
  logger: Logger;
  orm: Orm;
  db: Db;
  bus: EventBus;
  store: TransactionStore;
  auth: Authenticator;
  box: SecretBox;
  admin: AdminService;
  metrics: Metrics;
  live: LiveEvents;
  /** Read side: cursor pages and single transactions, scoped by principal. */
  transactions: TransactionQuery;
  idempotency: Idempotency;
  qr: QrService;
  /** Set by areas.ts once the upstream clients exist. */
  gateway: GatewayService;
  link: LinkService;
  /** Enqueue a one-off job (works from api-only processes too: the row is picked up by any worker). */
  enqueue(name: string, data: Record<string, unknown>): Promise<void>;
  webhooks: WebhookEndpointService;
  /** Present in processes that deliver webhooks (serve, worker). */
  dispatcher: WebhookDispatcher | null;
  /** The base URL this process is reachable at (for simulator defaults and the demo banner). */
  baseUrl: string;
}
