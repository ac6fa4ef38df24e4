import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import type { Db } from "../db/sql.js";
import type { Orm } from "../db/orm.js";
import type { Logger } from "../logger.js";
import type { SecretBox } from "../auth/secret-box.js";
import { upgradeLegacySecrets } from "../auth/stored-secrets.js";
import type { Metrics } from "../ops/metrics.js";
import type { Module, ModuleDefinition } from "../module.js";
import { WebhookEndpoint } from "./webhook-endpoint.entity.js";
import { WebhookAttempt, WebhookDelivery } from "./webhook-delivery.entity.js";
import { ENDPOINT_SECRETS, WebhookEndpointService } from "./endpoint-service.js";
import { WebhookDispatcher } from "./dispatcher.js";
import { TransactionDeliveriesResolver, WebhooksResolver } from "./webhooks.resolver.js";
import { OverviewWebhooksResolver } from "./health.resolver.js";

export { WEBHOOK_OUTBOX } from "./outbox-fanout.js";

export interface WebhooksModuleDeps {
  config: Pick<Config, "webhooks" | "egress">;
  orm: Orm;
  db: Db;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** This process delivers (serve, worker); an api-only process only records deliveries. */
  delivers: boolean;
}

export interface WebhooksModule extends Module {
  endpoints: WebhookEndpointService;
}

/** Signed webhooks: endpoints per API key, at-least-once delivery with retries, the delivery log. */
export function createWebhooksModule(deps: WebhooksModuleDeps): WebhooksModule {
  const { config, logger } = deps;
  const endpoints = new WebhookEndpointService(deps.orm, deps.db, deps.box, deps.clock, config.egress);
  const dispatcher = deps.delivers
    ? new WebhookDispatcher(deps.db, endpoints, deps.clock, logger, deps.metrics, {
        ...config.webhooks,
        egress: config.egress,
      })
    : null;
  return {
    endpoints,
    resolvers: [
      new WebhooksResolver(endpoints, dispatcher),
      new TransactionDeliveriesResolver(endpoints),
      new OverviewWebhooksResolver(deps.db),
    ],
    // Committed events in this process are delivered at once; the recurring job picks up retries and events
    // committed by other processes.
    jobs:
      dispatcher === null
        ? []
        : [{ name: "webhooks.dispatch", every: "1 second", lockLifetimeMs: 30_000, run: () => dispatcher.kick() }],
    // An event known to have no delivery rows (no matching endpoint) needs no pass: under load that was one
    // claim query per committed event.
    onEvent(e) {
      if (dispatcher !== null && e.deliveries !== 0) dispatcher.kickSoon();
    },
    // Secrets stored before issue 16 (v1) are rewritten bound to their rows (deliveries upgrade lazily too).
    async start() {
      const done = await upgradeLegacySecrets(deps.db, deps.box, ENDPOINT_SECRETS);
      if (done.upgraded + done.unreadable > 0) logger.info(done, "webhook secrets upgraded to the v2 format");
    },
    async stop() {
      await dispatcher?.stop();
    },
  };
}

export const webhooksModule: ModuleDefinition<WebhooksModuleDeps, WebhooksModule> = {
  name: "webhooks",
  entities: [WebhookEndpoint, WebhookDelivery, WebhookAttempt],
  resolvers: [WebhooksResolver, TransactionDeliveriesResolver, OverviewWebhooksResolver],
  create: createWebhooksModule,
};
