import type { Config } from "../config.js";
import type { Authenticator } from "../auth/keys.js";
import type { AdminService } from "../admin/admin-service.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { Idempotency } from "../transactions/idempotency.js";
import type { AreaModuleDeps, Module, ModuleDefinition } from "../module.js";
import { Gauge, type Registry } from "prom-client";
import {
  createNetworkClient,
  type CheckMode,
  type NetworkClient,
  type RateLimitPause,
  type Refusal,
  type TokenRefusal,
} from "./network-client.js";
import { NetworkToken } from "./network-token.js";
import { NetworkTokenResolver } from "./network-token.resolver.js";
import { CardResolver } from "./card.resolver.js";
import { cardRoute } from "./card.routes.js";
import { credentialsFromHeaders } from "../auth/credentials.js";
import type { TransactionQuery } from "../transactions/transaction-query.js";
import type { Invalidations } from "../cache/invalidation.js";
import type { SecretBox } from "../auth/secret-box.js";
import { networkMonitorPort, qrMonitorJob } from "./qr-monitor.job.js";
import type { RecheckRegistry } from "../transactions/recheck.js";
import { qrRecheck } from "./recheck.js";
import { QrResolver } from "./qr.resolver.js";
import { QR_ROUTES } from "./qr.routes.js";
import { QR_AREA } from "./area.js";
import { QrService } from "./qr-service.js";
import { qrSettings, type QrSettings } from "./settings.js";

export interface QrModuleDeps extends AreaModuleDeps {
  config: Pick<Config, "upstreamTimeoutMs">;
  /** Where the area's gauges are registered (the /metrics registry). */
  metrics: { registry: Registry };
  /** The network token's replacement: stored encrypted, effective in every process (qr/network-token.ts). */
  box: Pick<SecretBox, "seal" | "open">;
  invalidations: Invalidations;
  /** Where this process is reachable: the simulated network API's default address. */
  baseUrl: string;
  store: TransactionStore;
  idempotency: Idempotency;
  admin: Pick<AdminService, "merchantForIssue">;
  auth: Pick<Authenticator, "issueClientToken" | "fromCredentials">;
  /** Scoped reads (the card: a key sees its own transactions, a client token its one). */
  query: Pick<TransactionQuery, "one">;
  /** Where the area says what asking the network again about one payment is (transactions/recheck.ts). */
  rechecks: Pick<RecheckRegistry, "register">;
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
  deps.rechecks.register(
    QR_AREA.key.kind,
    qrRecheck(networkMonitorPort(client, () => clock.now(), settings.singleRate)),
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
      qrMonitorJob({ ...deps, intervalMs: settings.monitorIntervalMs, singleRate: settings.singleRate }, client),
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
  let paused: RateLimitPause | null = null;
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
    singleRate: settings.singleRate,
    now: () => clock.now().getTime(),
    proxy: settings.proxy,
    onTokenRefused: tokenRefusalReport(deps, token),
    onRateLimited(pause) {
      paused = pause;
      deps.logger.warn(
        { upstream: "network", ...pause },
        `network API: HTTP 429 on ${pause.endpoint}; no call until ${pause.until} (Retry-After ${pause.retryAfter ?? "absent"})`,
      );
    },
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
  const pausedNow = () => (paused !== null && Date.parse(paused.until) > clock.now().getTime() ? paused : null);
  return { token, client, readiness: () => networkReadiness(token, refused, pausedNow(), client.proxy) };
}

/**
 * A refused token (401 / errorCode 6), as the operator hears of it: one error line when it starts and one when it
 * ends (per process, not per batch), the gauge network_token_refused, and the token's status (/readyz, dashboard).
 */
function tokenRefusalReport(deps: QrModuleDeps, token: NetworkToken): (r: TokenRefusal | null) => void {
  const gauge = new Gauge({
    name: "network_token_refused",
    help: "1 while the network refuses the API token in use (HTTP 401 / errorCode 6): payments cannot be followed",
    registers: [deps.metrics.registry],
  });
  gauge.set(0);
  let since: TokenRefusal | null = null;
  return (r) => {
    token.refused(r);
    gauge.set(r === null ? 0 : 1);
    if (r !== null) {
      since = r;
      deps.logger.error(
        { upstream: "network", tokenRefused: true, ...r },
        `network API: the token is refused (unauthorized, HTTP ${r.httpStatus} on ${r.endpoint}) since ${r.since}; ` +
          "payments cannot be followed and stay pending: replace the token (setNetworkToken / npm run admin -- network-token:set)",
      );
    } else {
      deps.logger.error(
        { upstream: "network", tokenRefused: false, since: since?.since ?? null },
        `network API: the token is accepted again (refused since ${since?.since ?? "?"}); payments are followed again`,
      );
      since = null;
    }
  };
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

/**
 * What /readyz says of the network: the token refused or about to expire, a 429 pause, every call refused (what,
 * since when, the causes). Informational: issuing QRs still works, so the checks stay green.
 */
function networkReadiness(
  token: NetworkToken,
  refused: Refusal | null,
  paused: RateLimitPause | null,
  proxy: string | null,
) {
  const { warning, expiresAt, refusedSince } = token.status();
  const networkToken = {
    expiresAt: expiresAt?.toISOString() ?? null,
    warning,
    ...(refusedSince === null ? {} : { refusedSince: refusedSince.toISOString() }),
  };
  return {
    ...(warning === null ? {} : { networkToken }),
    ...(paused === null ? {} : { networkRateLimited: { until: paused.until, retryAfter: paused.retryAfter } }),
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
  // Demo mode only (src/demo/ loads it): its simulator and its part of the demo tenant.
  demo: () => import("./demo.js"),
};
