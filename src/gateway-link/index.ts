import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import type { Orm } from "../db/orm.js";
import type { Logger } from "../logger.js";
import type { Authenticator } from "../auth/keys.js";
import type { AdminService } from "../admin/admin-service.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { Idempotency } from "../transactions/idempotency.js";
import type { AreaModuleDeps, Module, ModuleDefinition } from "../module.js";
import type { SecretBox } from "../auth/secret-box.js";
import { BrowserPool, chooseSandbox, sandboxForThisMachine } from "./browser.js";
import { chromiumMissing, LinkService } from "./link-service.js";
import { linkSweepJob } from "./link-watch.job.js";
import { LinkWatch } from "./link-watch.js";
import { LinkRefusals } from "./link-refusals.js";
import { PagePoll } from "./page-poll.js";
import { pollClient } from "./poll-client.js";
import type { UpstreamClient } from "../upstreams/http-client.js";
import type { Metrics } from "../ops/metrics.js";
import { Gauge } from "prom-client";
import { PAYWAY_API, type UpstreamOrigins } from "../upstreams/origins.js";
import { LinkResolver } from "./link.resolver.js";
import { LINK_ROUTES } from "./link.routes.js";
import { LINK_AREA } from "./area.js";
import { LINK_MIGRATIONS } from "./migrations.js";
import { LinkConfig } from "./link-config.entity.js";
import { LinkConfigs } from "./link-configs.js";
import { LinkConfigResolver } from "./link-config.resolver.js";
import type { LinkPageProtocol, LinkProtocolName } from "./link-protocol.js";
import { paywayLinkProtocol } from "./payway-protocol.js";
import { linkSettings, type LinkSettings } from "./settings.js";
import { linkRecheck } from "./recheck.js";
import type { RecheckRegistry } from "../transactions/recheck.js";

export interface LinkModuleDeps extends AreaModuleDeps {
  config: Pick<Config, "egress">;
  /** Where the PayWay page API answers when PAYWAY_API_ORIGIN is unset (demo mode's twin registers it). */
  upstreamOrigins: Pick<UpstreamOrigins, "get">;
  store: TransactionStore;
  idempotency: Idempotency;
  orm: Orm;
  admin: Pick<AdminService, "mustHaveMerchant" | "acceptKeyTarget">;
  auth: Pick<Authenticator, "issueClientToken">;
  /** Seals what a payment followed without its page keeps (its token and cookies). */
  box: Pick<SecretBox, "seal" | "open">;
  /** This process runs jobs: it follows the payments it issues itself. */
  delivers: boolean;
  metrics: Pick<Metrics, "registry">;
  /** Where this process is reachable: the hosted checkout page's address. */
  baseUrl: string;
  /** Where the area says what asking a PayWay page's API again about one payment is (transactions/recheck.ts). */
  rechecks: Pick<RecheckRegistry, "register">;
}

export interface LinkModule extends Module {
  service: LinkService;
  configs: LinkConfigs;
  /** The headless browser that holds payment pages (tests read its page count). */
  pool: BrowserPool;
  /** The payments this worker follows without a page (tests and the bench read its stats). */
  watch: LinkWatch;
}

/**
 * The gateway-link area: a PayWay payment-link page driven by a headless browser until it shows its QR, then closed;
 * the payment is followed by a worker polling the page's API itself (link-watch.ts).
 */
export function createLinkModule(deps: LinkModuleDeps, settings: LinkSettings): LinkModule {
  const { config, logger } = deps;
  const pool = createPool(settings, config, logger, deps.clock);
  const configs = new LinkConfigs(deps.orm, deps.admin, config.egress);
  deps.admin.acceptKeyTarget({
    kind: LINK_AREA.key.kind,
    notFound: "Payment-link configuration not found for this merchant",
    belongsTo: (id, merchantId) => configs.belongsTo(id, merchantId),
  });
  const apiOrigin = () => settings.paywayApiOrigin ?? deps.upstreamOrigins.get(PAYWAY_API) ?? "";
  // The one adapter there is; a configuration names it (link-protocol.ts).
  const protocol = (_name: LinkProtocolName): LinkPageProtocol => paywayLinkProtocol(apiOrigin());
  const pollTimeoutMs = Math.min(settings.openTimeoutMs, 10_000);
  const polls = pollClient(settings.proxy, pollTimeoutMs);
  const refusals = new LinkRefusals(logger, polls.proxy, () => deps.clock.now());
  const watch = pollWatch(deps, settings, pool, polls, refusals, pollTimeoutMs);
  deps.rechecks.register(
    LINK_AREA.key.kind,
    linkRecheck({ box: deps.box, poll: (session) => watch.pollOutOfTurn(session), clock: deps.clock }),
  );
  watchGauges(deps.metrics, watch);
  const service = new LinkService(deps.store, configs, deps.auth, pool, deps.clock, logger, {
    openTimeoutMs: settings.openTimeoutMs,
    protocol,
    baseUrl: deps.baseUrl,
    egress: config.egress,
    allowedOrigins: settings.allowedOrigins,
    box: deps.box,
    watch: deps.delivers ? watch : null,
    refusals,
  });
  return {
    service,
    configs,
    pool,
    watch,
    resolvers: [new LinkResolver(service, deps.idempotency), new LinkConfigResolver(configs)],
    jobs: [linkSweepJob(deps, watch)],
    async start() {
      if (deps.delivers) watch.start();
    },
    // SIGTERM: the payments this worker polls are made due now, for another worker's sweep to claim.
    handOver: () => watch.handOver(),
    async stop() {
      await watch.stop();
      await pool.close();
      await polls.close();
    },
    readiness: () => refusals.readiness(),
  };
}

/** The watch of PayWay payments polled without a browser; a page is held for one only after its polls are refused. */
function pollWatch(
  deps: LinkModuleDeps,
  settings: LinkSettings,
  pool: BrowserPool,
  polls: UpstreamClient,
  refusals: LinkRefusals,
  timeoutMs: number,
): LinkWatch {
  const { config } = deps;
  return new LinkWatch({
    ...deps,
    polls,
    timeoutMs,
    lateWatchMs: settings.lateWatchMs,
    maxPolls: settings.maxPolls,
    intervalMs: settings.pollIntervalMs,
    pollRate: settings.pollRate,
    refusals,
    openPage: (url, api, share) =>
      PagePoll.open(pool, {
        url,
        apiOrigin: api,
        allowedOrigins: settings.allowedOrigins,
        egress: config.egress,
        timeoutMs: settings.openTimeoutMs,
        share,
      }),
  });
}

/** What /metrics says of the payments this process follows without a browser. */
function watchGauges(metrics: Pick<Metrics, "registry">, watch: LinkWatch): void {
  const gauge = (name: string, help: string, read: (s: ReturnType<LinkWatch["stats"]>) => number) =>
    new Gauge({
      name,
      help,
      registers: [metrics.registry],
      collect() {
        this.set(read(watch.stats()));
      },
    });
  gauge("link_polls_followed", "PayWay payments this process polls without a browser", (s) => s.held);
  gauge("link_polls_through_pages", "Of those, polled through a held page after a 403", (s) => s.viaPage);
  gauge(
    "link_polls_erring",
    "Of those, payments whose polls answered an error (not an outage) 10 times or more in a row (not failed for it)",
    (s) => s.erring,
  );
  gauge("link_polls_rate_limited", "Status polls PayWay answered with 429 since start", (s) => s.rateLimited);
  gauge(
    "link_poll_lateness_p99_seconds",
    "p99 of how late polls went out (recent 20,000)",
    (s) => s.latenessP99Ms / 1000,
  );
}

function createPool(
  settings: LinkSettings,
  config: LinkModuleDeps["config"],
  logger: Logger,
  clock: Clock,
): BrowserPool {
  const sandbox =
    settings.sandbox === "auto"
      ? sandboxForThisMachine()
      : chooseSandbox({ root: false, userNamespaces: true }, settings.sandbox);
  const pool = new BrowserPool({
    executablePath: settings.chromiumPath,
    sandboxArgs: sandbox.args,
    // Held pages (monitors, pages polled through) take at most LINK_MAX_MONITORS: LINK_OPEN_PAGES are always left
    // for generates, and each merchant and configuration has its share of both (page-shares.ts).
    maxPages: settings.maxMonitors + settings.openPages,
    shares: { held: settings.maxMonitors, ...settings.shares },
    now: () => clock.now().getTime(),
    // A page whose documents the pool rewrites (the connect-src policy, chromium.ts) counts as a public page
    // for Chromium's local-network checks, which would then refuse a loopback link's own allowlisted loopback
    // origins: only where private addresses are allowed at all (demo, tests) are those checks left off.
    extraArgs: config.egress.permissive ? ["--disable-features=LocalNetworkAccessChecks"] : [],
    proxy: settings.proxy,
    userAgent: settings.userAgent,
    logger,
  });
  if (!pool.executableAvailable())
    logger.warn({ chromiumPath: settings.chromiumPath }, chromiumMissing(settings.chromiumPath));
  else if (sandbox.sandboxed) logger.info({ sandbox: true }, sandbox.reason);
  else logger.warn({ sandbox: false }, sandbox.reason);
  return pool;
}

export const linkModule: ModuleDefinition<LinkModuleDeps, LinkModule, LinkSettings> = {
  name: "gateway-link",
  entities: [LinkConfig],
  resolvers: [LinkResolver, LinkConfigResolver],
  routes: LINK_ROUTES,
  area: LINK_AREA,
  migrations: LINK_MIGRATIONS,
  rateLimited: ["/gateway-link"],
  settings: linkSettings,
  create: createLinkModule,
  // Demo mode only (src/demo/ loads it): its simulator and its part of the demo tenant.
  demo: () => import("./demo.js"),
};
