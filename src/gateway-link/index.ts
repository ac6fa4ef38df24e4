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
import { BrowserPool, chooseSandbox, sandboxForThisMachine } from "./browser.js";
import { chromiumMissing, LinkService } from "./link-service.js";
import { LinkMonitors, linkExpirySweepJob, linkMonitorJob } from "./link-monitor.job.js";
import { LinkResolver } from "./link.resolver.js";
import { LINK_ROUTES } from "./link.routes.js";
import { LinkConfig } from "./link-config.entity.js";
import { LinkConfigs } from "./link-configs.js";
import { LinkConfigResolver } from "./link-config.resolver.js";
import { LINK_PAGE_PROTOCOLS } from "./link-protocol.js";

export interface LinkModuleDeps {
  config: Pick<Config, "link" | "simulators" | "egress">;
  clock: Clock;
  db: Db;
  logger: Logger;
  store: TransactionStore;
  idempotency: Idempotency;
  orm: Orm;
  admin: Pick<AdminService, "mustHaveMerchant" | "acceptKeyTarget">;
  auth: Pick<Authenticator, "issueClientToken">;
  /** Where this process is reachable: the hosted checkout page's address. */
  baseUrl: string;
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
  const sandbox =
    config.link.sandbox === "auto"
      ? sandboxForThisMachine()
      : chooseSandbox({ root: false, userNamespaces: true }, config.link.sandbox);
  const pool = new BrowserPool({
    executablePath: config.link.chromiumPath,
    sandboxArgs: sandbox.args,
    maxPages: config.link.maxMonitors + 20,
    // A page whose documents the pool rewrites (the connect-src policy, chromium.ts) counts as a public page
    // for Chromium's local-network checks, which would then refuse a loopback link's own allowlisted loopback
    // origins: only where private addresses are allowed at all (demo, tests) are those checks left off.
    extraArgs: config.egress.permissive ? ["--disable-features=LocalNetworkAccessChecks"] : [],
    logger,
  });
  if (!pool.executableAvailable())
    logger.warn({ chromiumPath: config.link.chromiumPath }, chromiumMissing(config.link.chromiumPath));
  else if (sandbox.sandboxed) logger.info({ sandbox: true }, sandbox.reason);
  else logger.warn({ sandbox: false }, sandbox.reason);
  const monitors = new LinkMonitors();
  const configs = new LinkConfigs(deps.orm, deps.admin, config.egress);
  deps.admin.acceptKeyTarget({
    kind: "gateway_link",
    field: "linkConfigId",
    notFound: "Payment-link configuration not found for this merchant",
    belongsTo: (id, merchantId) => configs.belongsTo(id, merchantId),
  });
  const service = new LinkService(deps.store, configs, deps.auth, pool, deps.clock, logger, {
    openTimeoutMs: config.link.openTimeoutMs,
    protocol,
    baseUrl: deps.baseUrl,
    egress: config.egress,
    allowedOrigins: config.link.allowedOrigins,
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
        {
          ...deps,
          maxMonitors: config.link.maxMonitors,
          openTimeoutMs: config.link.openTimeoutMs,
          protocol,
          egress: config.egress,
          allowedOrigins: config.link.allowedOrigins,
        },
        service,
        pool,
        monitors,
      ),
      linkExpirySweepJob(deps),
    ],
    mount(app) {
      if (simulator !== null) app.use(simulator.router, simulator.controls);
    },
    // SIGTERM: this process takes no more jobs; its page monitors stop (pages closed, nothing written) and
    // each gets a fresh job, which another worker resumes by clientId within a second or two.
    async handOver() {
      const handed = await monitors.interruptAll();
      for (const transactionId of handed)
        await deps
          .enqueue("link.monitor", { transactionId })
          .catch((err: unknown) =>
            logger.warn({ err, tx: transactionId }, "could not hand a link monitor over; its job lock expires in 30 s"),
          );
      if (handed.length > 0) logger.info({ monitors: handed.length }, "link monitors handed over");
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
