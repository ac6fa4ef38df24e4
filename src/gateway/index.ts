import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { Authenticator } from "../auth/keys.js";
import type { AdminService } from "../admin/admin-service.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { Idempotency } from "../transactions/idempotency.js";
import type { Module, ModuleDefinition } from "../module.js";
import { createGatewaySimulator, type GatewaySimulator } from "../simulators/gateway/index.js";
import { DEMO_GATEWAY } from "../simulators/demo-upstreams.js";
import { simulatedQr } from "../simulators/upstream-qr.js";
import { createGatewayClient } from "./upstream-client.js";
import { gatewayMonitorJob } from "./gateway-monitor.job.js";
import { GatewayResolver } from "./gateway.resolver.js";
import { GATEWAY_ROUTES } from "./gateway.routes.js";
import { GatewayService } from "./gateway-service.js";

export interface GatewayModuleDeps {
  config: Pick<Config, "gateway" | "upstreamTimeoutMs" | "simulators">;
  /** Where this process is reachable: the simulated gateway API's default address. */
  baseUrl: string;
  clock: Clock;
  db: Db;
  logger: Logger;
  store: TransactionStore;
  idempotency: Idempotency;
  admin: Pick<AdminService, "gatewayCredentialsForUse" | "apiKey" | "gatewayCredentials">;
  auth: Pick<Authenticator, "issueClientToken">;
}

export interface GatewayModule extends Module {
  service: GatewayService;
  simulator: GatewaySimulator | null;
}

/** The hosted gateway area: signed QR requests to the gateway, followed with its check-transaction API. */
export function createGatewayModule(deps: GatewayModuleDeps): GatewayModule {
  const { config, clock } = deps;
  let simulator: GatewaySimulator | null = null;
  if (config.simulators) {
    const gatewayQr = simulatedQr("sim_gateway@abaa", "Sim Gateway");
    simulator = createGatewaySimulator({ makeQr: (amount, currency) => gatewayQr(amount, currency === "USD" ? 840 : 116) });
    simulator.registerMerchant(DEMO_GATEWAY.merchantId, DEMO_GATEWAY.apiKey);
  }
  const client = createGatewayClient({
    baseUrl: config.gateway.baseUrl ?? `${deps.baseUrl}/sim/gateway-api`,
    timeoutMs: config.upstreamTimeoutMs,
    clock: () => clock.now(),
  });
  const service = new GatewayService(deps.store, deps.admin, deps.auth, client, clock);
  const sim = simulator;
  return {
    service,
    simulator,
    resolvers: [new GatewayResolver(service, deps.idempotency)],
    jobs: [gatewayMonitorJob({ ...deps, intervalMs: config.gateway.monitorIntervalMs }, client)],
    mount(app) {
      if (sim === null) return;
      app.use("/sim/gateway-api", sim.api);
      app.use(sim.controls);
    },
  };
}

export const gatewayModule: ModuleDefinition<GatewayModuleDeps, GatewayModule> = {
  name: "gateway",
  resolvers: [GatewayResolver],
  routes: GATEWAY_ROUTES,
  create: createGatewayModule,
};
