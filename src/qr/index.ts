import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { Authenticator } from "../auth/keys.js";
import type { AdminService } from "../admin/admin-service.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { Idempotency } from "../transactions/idempotency.js";
import type { Module, ModuleDefinition } from "../module.js";
import { Gauge, type Registry } from "prom-client";
import { createNetworkClient, type CheckMode, type NetworkClient, type Refusal } from "./network-client.js";
import { NetworkToken } from "./network-token.js";
import { NetworkTokenResolver } from "./network-token.resolver.js";
import { CardResolver } from "./card.resolver.js";
import { cardRoute } from "./card.routes.js";
import { credentialsFromHeaders } from "../auth/credentials.js";
import type { TransactionQuery } from "../transactions/transaction-query.js";
import type { Invalidations } from "../cache/invalidation.js";
import type { SecretBox } from "../auth/secret-box.js";
import { qrMonitorJob } from "./qr-monitor.job.js";
import { QrResolver } from "./qr.resolver.js";
import { QR_ROUTES } from "./qr.routes.js";
import { QR_AREA } from "./area.js";
import { QrService } from "./qr-service.js";
import { qrSettings, type QrSettings } from "./settings.js";

export interface QrModuleDeps {
  config: Pick<Config, "upstreamTimeoutMs">;
  /** Where the area's gauges are registered (the /metrics registry). */
  metrics: { registry: Registry };
  /** The network token's replacement: stored encrypted, effective in every process (qr/network-token.ts). */
  box: Pick<SecretBox, "seal" | "open">;
  invalidations: Invalidations;
  /** Where this process is reachable: the simulated network API's default address. */
  baseUrl: string;
  clock: Clock;
  db: Db;
  logger: Logger;
  store: TransactionStore;
  idempotency: Idempotency;
  admin: Pick<AdminService, "merchantForIssue">;
  auth: Pick<Authenticator, "issueClientToken" | "fromCredentials">;
  /** Scoped reads (the card: a key sees its own transactions, a client token its one). */
  query: Pick<TransactionQuery, "one">;
}

export interface QrModule extends Module {
  service: QrService;
  /** The network API token in use. */
  token: NetworkToken;
}

/** The generic QR area: issue, check, verify and decode KHQR; follow payments on the national network. */
export function createQrModule(deps: QrModuleDeps, settings: QrSettings): QrModule {
  const { clock, store } = deps;
  const network = networkFollower(deps, settings);
  const { token, client } = network;
  const service = new QrService(store, deps.admin, deps.auth, clock, deps.baseUrl, (qr, source) =>
    client.generateDeeplink(qr, source),
  );
  return {
    service,
    token,
    resolvers: [
      new QrResolver(service, deps.idempotency),
      new NetworkTokenResolver(token),
      new CardResolver(deps.query),
    ],
    jobs: [
      qrMonitorJob({ ...deps, intervalMs: settings.monitorIntervalMs }, client),
      // Ahead of expiry, with NETWORK_API_EMAIL: at most one renewal attempt a day (network-token.ts).
      { name: "network.token-renewal", every: "1 hour", lockLifetimeMs: 60_000, run: () => token.renewAhead() },
    ],
    mount(app) {
      app.get(
        "/cards/:file",
        cardRoute({
          principal: (req) => {
            const token = typeof req.query.token === "string" ? req.query.token : undefined;
            return deps.auth.fromCredentials({ ...credentialsFromHeaders(req.headers), clientToken: token });
          },
          transaction: (p, id) => deps.query.one(p, id),
        }),
      );
    },
    async start() {
      await token.load();
    },
    async stop() {
      await client.close();
    },
    readiness: () => network.readiness(),
  };
}

/**
 * The national network as this area follows it: the token in use (renewed through the client), the client, their
 * gauges, and what /readyz says of them (a token about to expire, every call refused).
 */
function networkFollower(
  deps: QrModuleDeps,
  settings: QrSettings,
): {
  token: NetworkToken;
  client: NetworkClient;
  readiness(): Record<string, unknown>;
} {
  const { config, clock } = deps;
  const showMode = modeGauge(deps.metrics.registry);
  let refused: Refusal | null = null;
  const token = new NetworkToken({
    db: deps.db,
    box: deps.box,
    invalidations: deps.invalidations,
    logger: deps.logger,
    now: () => clock.now().getTime(),
    envToken: settings.token,
    email: settings.email,
    // The client is made below (it reads the token in use); renewals come later, through it.
    renew: (email) => client.renewToken(email),
  });
  new Gauge({
    name: "network_token_expires_at_seconds",
    help: "When the network API token in use expires (its JWT exp, Unix seconds); absent if it carries none",
    registers: [deps.metrics.registry],
    collect() {
      const expiresAt = token.status().expiresAt;
      this.reset();
      if (expiresAt !== null) this.set(Math.floor(expiresAt.getTime() / 1000));
    },
  });
  const client = createNetworkClient({
    baseUrl: settings.baseUrl ?? `${deps.baseUrl}/sim/network-api`,
    token: () => token.current(),
    onUnauthorized: (used) => token.unauthorized(used),
    timeoutMs: config.upstreamTimeoutMs,
    batchSize: settings.batchSize,
    listReprobeMs: settings.listReprobeMs,
    singleConcurrency: settings.singleConcurrency,
    now: () => clock.now().getTime(),
    proxy: settings.proxy,
    onRefused(r) {
      refused = r;
      if (r === null) deps.logger.info({ upstream: "network" }, "network API: calls are answered again");
      else deps.logger.error({ upstream: "network", ...r, proxy: client.proxy }, refusalMessage(r, client.proxy));
    },
    onMode(mode, reason) {
      showMode(mode);
      deps.logger.warn({ upstream: "network", checkMode: mode, reason }, `network checks: ${mode} mode (${reason})`);
    },
  });
  return { token, client, readiness: () => networkReadiness(token, refused, client.proxy) };
}

/** network_md5_check_mode: 1 for the check mode in use; starts at list. */
function modeGauge(registry: Registry): (mode: CheckMode) => void {
  const gauge = new Gauge({
    name: "network_md5_check_mode",
    help: "How the generic QR monitor checks payments: 1 for the mode in use (list: md5-list calls; single: one call per md5)",
    labelNames: ["mode"],
    registers: [registry],
  });
  const showMode = (mode: CheckMode) => {
    gauge.set({ mode: "list" }, mode === "list" ? 1 : 0);
    gauge.set({ mode: "single" }, mode === "single" ? 1 : 0);
  };
  showMode("list");
  return showMode;
}

/** What /readyz says of the network: the token about to expire, every call refused (what, since when, the causes). */
function networkReadiness(token: NetworkToken, refused: Refusal | null, proxy: string | null) {
  const { warning, expiresAt } = token.status();
  return {
    ...(warning === null ? {} : { networkToken: { expiresAt: expiresAt?.toISOString() ?? null, warning } }),
    ...(refused === null
      ? {}
      : {
          network: {
            refused: `every network API call answers HTTP 403 since ${refused.since}`,
            endpoints: refused.endpoints,
            likelyCauses: LIKELY_CAUSES,
            setting: "NETWORK_API_PROXY",
            proxy,
          },
        }),
  };
}

const LIKELY_CAUSES = [
  "the network API refuses callers outside Cambodia (geo-restriction): route the calls through a proxy in " +
    "Cambodia with NETWORK_API_PROXY=http://[user:pass@]host:port",
  "the token is not allowed to call these endpoints: check it with the network (NETWORK_API_TOKEN / setNetworkToken)",
];

function refusalMessage(r: Refusal, proxy: string | null): string {
  return (
    `network API: every call is refused with HTTP 403 since ${r.since} (${r.endpoints.join(", ")}); ` +
    `payments cannot be followed. Likely causes: ${LIKELY_CAUSES.join("; or ")}` +
    (proxy === null ? "" : ` (calls go through the proxy ${proxy})`)
  );
}

export const qrModule: ModuleDefinition<QrModuleDeps, QrModule, QrSettings> = {
  name: "qr",
  resolvers: [QrResolver, NetworkTokenResolver, CardResolver],
  routes: QR_ROUTES,
  area: QR_AREA,
  rateLimited: ["/qr", "/cards"],
  settings: qrSettings,
  create: createQrModule,
};
