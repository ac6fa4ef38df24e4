import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import type { Db } from "../db/sql.js";
import type { Orm } from "../db/orm.js";
import type { Logger } from "../logger.js";
import type { Authenticator } from "../auth/keys.js";
import type { AdminService } from "../admin/admin-service.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { Idempotency } from "../transactions/idempotency.js";
import type { Module, ModuleDefinition } from "../module.js";
import { createLinkSimulator } from "../simulators/link/index.js";
import { simulatedQr } from "../simulators/upstream-qr.js";
import { BrowserPool } from "./browser.js";
import { chromiumMissing, LinkService } from "./link-service.js";
import { linkExpirySweepJob, linkMonitorJob } from "./link-monitor.job.js";
import { LinkResolver } from "./link.resolver.js";
import { LINK_ROUTES } from "./link.routes.js";
import { LinkConfig } from "./link-config.entity.js";
import { LinkConfigs } from "./link-configs.js";
import { LinkConfigResolver } from "./link-config.resolver.js";
import { LINK_PAGE_PROTOCOLS } from "./link-protocol.js";

export interface LinkModuleDeps {
  config: Pick<Config, "link" | "simulators">;
  clock: Clock;
  db: Db;
  logger: Logger;
  store: TransactionStore;
  idempotency: Idempotency;
  orm: Orm;
  admin: Pick<AdminService, "mustHaveMerchant" | "acceptKeyTarget">;
  auth: Pick<Authenticator, "issueClientToken">;
  /** Enqueue a one-off job: the page monitor runs wherever a worker takes it. */
  enqueue(name: string, data: Record<string, unknown>): Promise<void>;
}

export interface LinkModule extends Module {
  service: LinkService;
  configs: LinkConfigs;
  /** The headless browser that holds payment pages (tests read its page count). */
  pool: BrowserPool;
}

/** The gateway-link area: a payment-link page driven by a headless browser, held open for at most 180 s. */
export function createLinkModule(deps: LinkModuleDeps): LinkModule {
  const { config, logger } = deps;
  const protocol = LINK_PAGE_PROTOCOLS[config.link.pageProtocol];
  const pool = new BrowserPool({
    executablePath: config.link.chromiumPath,
    maxPages: config.link.maxMonitors + 20,
    logger,
  });
  if (!pool.executableAvailable())
    logger.warn({ chromiumPath: config.link.chromiumPath }, chromiumMissing(config.link.chromiumPath));
  const configs = new LinkConfigs(deps.orm, deps.admin);
  deps.admin.acceptKeyTarget({
    kind: "gateway_link",
    field: "linkConfigId",
    notFound: "Payment-link configuration not found for this merchant",
    belongsTo: (id, merchantId) => configs.belongsTo(id, merchantId),
  });
  const service = new LinkService(deps.store, configs, deps.auth, pool, deps.clock, logger, {
    openTimeoutMs: config.link.openTimeoutMs,
    protocol,
    // The monitor runs wherever a worker takes the job; in `serve` that is usually this process.
    startMonitor: (transactionId) => deps.enqueue("link.monitor", { transactionId }),
  });
  const simulator = config.simulators
    ? createLinkSimulator({ makeQr: simulatedQr("sim_link@abaa", "Sim Pay Link") })
    : null;
  return {
    service,
    configs,
    pool,
    resolvers: [new LinkResolver(service, deps.idempotency), new LinkConfigResolver(configs)],
    jobs: [
      linkMonitorJob(
        { ...deps, maxMonitors: config.link.maxMonitors, openTimeoutMs: config.link.openTimeoutMs, protocol },
        service,
        pool,
      ),
      linkExpirySweepJob(deps),
    ],
    mount(app) {
      if (simulator !== null) app.use(simulator.router, simulator.controls);
    },
    async stop() {
      await pool.close();
    },
  };
}

export const linkModule: ModuleDefinition<LinkModuleDeps, LinkModule> = {
  name: "gateway-link",
  entities: [LinkConfig],
  resolvers: [LinkResolver, LinkConfigResolver],
  routes: LINK_ROUTES,
  create: createLinkModule,
};
