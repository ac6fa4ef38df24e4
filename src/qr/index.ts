import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { Authenticator } from "../auth/keys.js";
import type { AdminService } from "../admin/admin-service.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { Idempotency } from "../transactions/idempotency.js";
import type { Module, ModuleDefinition } from "../module.js";
import { createNetworkSimulator, type NetworkSimulator } from "../simulators/network/index.js";
import { mountSimulator } from "../simulators/http.js";
import { createNetworkClient } from "./network-client.js";
import { qrMonitorJob } from "./qr-monitor.job.js";
import { QrResolver } from "./qr.resolver.js";
import { QR_ROUTES } from "./qr.routes.js";
import { QrService, type IssuedFacts } from "./qr-service.js";

export interface QrModuleDeps {
  config: Pick<Config, "network" | "upstreamTimeoutMs" | "simulators">;
  /** Where this process is reachable: the simulated network API's default address. */
  baseUrl: string;
  clock: Clock;
  db: Db;
  logger: Logger;
  store: TransactionStore;
  idempotency: Idempotency;
  admin: Pick<AdminService, "merchantForIssue">;
  auth: Pick<Authenticator, "issueClientToken">;
}

export interface QrModule extends Module {
  service: QrService;
  /** The national network's simulator, when simulators are on. */
  simulator: NetworkSimulator | null;
}

/** Simulated payments remember what each QR pays for this many QRs (the oldest are forgotten). */
const ISSUED_MEMORY = 100_000;

/** The generic QR area: issue, check, verify and decode KHQR; follow payments on the national network. */
export function createQrModule(deps: QrModuleDeps): QrModule {
  const { config, clock, store } = deps;
  let simulator: NetworkSimulator | null = null;
  let onIssued: ((md5: string, facts: IssuedFacts) => void) | null = null;
  if (config.simulators) {
    // What each issued QR pays, for the network simulator's answers (filled as QRs are issued here).
    const issued = new Map<string, IssuedFacts>();
    onIssued = (md5, facts) => {
      issued.set(md5, facts);
      if (issued.size > ISSUED_MEMORY) issued.delete(issued.keys().next().value as string);
    };
    simulator = createNetworkSimulator({ token: config.network.token, describe: (md5) => issued.get(md5) });
  }
  const client = createNetworkClient({
    baseUrl: config.network.baseUrl ?? `${deps.baseUrl}/sim/network-api`,
    token: config.network.token,
    timeoutMs: config.upstreamTimeoutMs,
    batchSize: config.network.batchSize,
  });
  const service = new QrService(store, deps.admin, deps.auth, clock, onIssued);
  return {
    service,
    simulator,
    resolvers: [new QrResolver(service, deps.idempotency)],
    jobs: [qrMonitorJob({ ...deps, intervalMs: config.network.monitorIntervalMs }, client)],
    mount(app) {
      if (simulator !== null) mountSimulator(app, "/sim/network-api", simulator);
    },
  };
}

export const qrModule: ModuleDefinition<QrModuleDeps, QrModule> = {
  name: "qr",
  resolvers: [QrResolver],
  routes: QR_ROUTES,
  create: createQrModule,
};
