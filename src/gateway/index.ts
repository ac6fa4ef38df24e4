import type { Request } from "express";
import type { Config } from "../config.js";
import type { Orm } from "../db/orm.js";
import type { SecretBox } from "../auth/secret-box.js";
import { upgradeLegacySecrets } from "../auth/stored-secrets.js";
import type { Invalidations } from "../cache/invalidation.js";
import type { Authenticator } from "../auth/keys.js";
import type { AdminService } from "../admin/admin-service.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { Idempotency } from "../transactions/idempotency.js";
import type { AreaModuleDeps, Module, ModuleDefinition } from "../module.js";
import { createGatewayClient } from "./upstream-client.js";
import { GatewayLimits, gatewayMonitorJob } from "./gateway-monitor.job.js";
import { PUSHBACK_PATH, pushbackRouter } from "./pushback.js";
import { RateLimiter } from "../auth/rate-limit.js";
import { clientAddress } from "../auth/client-address.js";
import { GatewayResolver } from "./gateway.resolver.js";
import { GATEWAY_ROUTES } from "./gateway.routes.js";
import { GATEWAY_AREA } from "./area.js";
import { GATEWAY_MIGRATIONS } from "./migrations.js";
import { GatewayService } from "./gateway-service.js";
import { GatewayConfig } from "./gateway-config.entity.js";
import { GATEWAY_SECRET, GatewayConfigs } from "./gateway-configs.js";
import { GatewayConfigResolver } from "./gateway-config.resolver.js";
import { gatewaySettings, type GatewaySettings } from "./settings.js";
import { gatewayRecheck } from "./recheck.js";
import type { RecheckRegistry } from "../transactions/recheck.js";

export interface GatewayModuleDeps extends AreaModuleDeps {
  config: Pick<Config, "upstreamTimeoutMs" | "rateLimit" | "trustedProxies">;
  /** Where this process is reachable: the simulated gateway API's default address. */
  baseUrl: string;
  store: TransactionStore;
  idempotency: Idempotency;
  orm: Orm;
  box: SecretBox;
  invalidations: Invalidations;
  admin: Pick<AdminService, "apiKey" | "mustHaveMerchant" | "acceptKeyTarget">;
  auth: Pick<Authenticator, "issueClientToken">;
  /** Runs a job now (a pushback asks for the monitor's next round at once). */
  enqueue(name: string, data: Record<string, unknown>): Promise<void>;
  /** Where the area says what asking the gateway again about one payment is (transactions/recheck.ts). */
  rechecks: Pick<RecheckRegistry, "register">;
}

export interface GatewayModule extends Module {
  service: GatewayService;
  configs: GatewayConfigs;
}

/** The hosted gateway area: signed QR requests to the gateway, followed with its check-transaction API. */
export function createGatewayModule(deps: GatewayModuleDeps, settings: GatewaySettings): GatewayModule {
  const { config, clock } = deps;
  const client = createGatewayClient({
    baseUrl: settings.baseUrl ?? `${deps.baseUrl}/sim/gateway-api`,
    timeoutMs: config.upstreamTimeoutMs,
    clock: () => clock.now(),
    proxy: settings.proxy,
  });
  const configs = new GatewayConfigs(deps.orm, deps.db, deps.box, deps.admin, deps.invalidations, () =>
    clock.now().getTime(),
  );
  deps.admin.acceptKeyTarget({
    kind: GATEWAY_AREA.key.kind,
    notFound: "Gateway configuration not found for this merchant",
    belongsTo: (id, merchantId) => configs.belongsTo(id, merchantId),
  });
  // The gateway's pushback after a payment comes to a per-configuration URL (sent as callback_url).
  const pushbackUrl = (configId: string) =>
    settings.pushback ? `${deps.baseUrl}${PUSHBACK_PATH}/${encodeURIComponent(configId)}` : null;
  const service = new GatewayService(deps.store, configs, deps.auth, client, clock, deps.baseUrl, pushbackUrl);
  const limits = new GatewayLimits(() => clock.now().getTime());
  const now = () => clock.now().getTime();
  deps.rechecks.register(GATEWAY_AREA.key.kind, gatewayRecheck({ admin: deps.admin, configs, client, limits, now }));
  return {
    service,
    configs,
    resolvers: [new GatewayResolver(service, deps.idempotency), new GatewayConfigResolver(configs)],
    jobs: [gatewayMonitorJob({ ...deps, configs, limits, intervalMs: settings.monitorIntervalMs }, client)],
    mount(app) {
      // Unauthenticated, so outside the per-credential limiter: its own buckets per address and per configuration.
      const limiter = config.rateLimit.perMinute > 0 ? new RateLimiter(config.rateLimit.perMinute) : null;
      const { db, enqueue, logger } = deps;
      const addressOf = (req: Request) => clientAddress(req, config.trustedProxies);
      app.post(
        `${PUSHBACK_PATH}/:configId`,
        pushbackRouter({ db, configs, enqueue, logger, clock, limiter, addressOf }),
      );
    },
    async stop() {
      await client.close();
    },
    // Secrets stored before issue 16 (v1) are rewritten bound to their rows (reads upgrade lazily too).
    async start() {
      const done = await upgradeLegacySecrets(deps.db, deps.box, [GATEWAY_SECRET]);
      if (done.upgraded + done.unreadable > 0) deps.logger.info(done, "gateway secrets upgraded to the v2 format");
    },
  };
}

export const gatewayModule: ModuleDefinition<GatewayModuleDeps, GatewayModule, GatewaySettings> = {
  name: "gateway",
  entities: [GatewayConfig],
  resolvers: [GatewayResolver, GatewayConfigResolver],
  routes: GATEWAY_ROUTES,
  area: GATEWAY_AREA,
  migrations: GATEWAY_MIGRATIONS,
  rateLimited: ["/gateway"],
  settings: gatewaySettings,
  create: createGatewayModule,
  // Demo mode only (src/demo/ loads it): its simulator and its part of the demo tenant.
  demo: () => import("./demo.js"),
};
