import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import express from "express";
import { pinoHttp } from "pino-http";
import type { Config } from "../config.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import { logsRequests, requestLogOptions } from "../logs/requests.js";
import { listen } from "../startup.js";
import { sameToken, type Authenticator } from "../auth/keys.js";
import { BearerThrottle, throttleKey } from "../auth/bearer-throttle.js";
import { clientAddress } from "../auth/client-address.js";
import { answerClientError } from "../rest/client-error.js";
import { capConnections, descriptorWarning, httpServerOptions } from "../rest/connection-caps.js";
import { boundSlowReaders } from "../rest/slow-readers.js";
import { bodyErrors, internalErrorHandler, notFoundHandler } from "../rest/shim.js";
import { scrapeRoute } from "../ops/scrape.js";
import type { Metrics } from "../ops/metrics.js";

// The HTTP edge's listeners and what every request passes before any module's handler: request ids, request logs,
// metrics, the per-address budgets, the failed-credential throttle, /healthz and /metrics; and the last handlers of
// each listener (body errors, 404, 500). app.ts wires it; the policy is here (docs/architecture.md).

/** The listeners and the front of the HTTP edge. */
export interface Http {
  app: express.Express;
  server: Server;
  /** The operator listener's app (ADMIN_PORT), or the public one when there is none. */
  adminApp: express.Express;
  adminServer: Server | null;
  baseUrl: string;
  credentialThrottle: BearerThrottle;
  /** Who a request comes from: TRUSTED_PROXIES' forwarded address, else the TCP peer (src/auth/client-address.ts). */
  addressOf(req: IncomingMessage): string;
  now(): number;
}

export interface HttpDeps {
  logger: Logger;
  clock: Clock;
  metrics: Metrics;
  auth: Pick<Authenticator, "isAdminToken" | "verifyClientToken">;
}

/** A new express app with the edge's settings. */
function edgeApp(): express.Express {
  const app = express();
  app.disable("x-powered-by");
  // No ETag on API answers: every one is a POST or a live status, so the per-response hash bought nothing.
  app.set("etag", false);
  app.set("trust proxy", false);
  return app;
}

/** A listener's server with the connection caps and the sending side's bounds (rest/connection-caps.ts, slow-readers.ts). */
function edgeServer(app: express.Express, config: Config, logger: Logger, name: string, now: () => number): Server {
  const server = createServer(httpServerOptions(config.http), app);
  server.on("clientError", answerClientError);
  capConnections(server, config.http, logger, name, now, config.trustedProxies);
  boundSlowReaders(server, config.http, logger, name);
  return server;
}

/** The public listener (listening on return), the operator one (listening once closeHttp runs), and their front. */
export async function openHttp(config: Config, deps: HttpDeps): Promise<Http> {
  const { logger, metrics, auth } = deps;
  const app = edgeApp();
  const now = () => deps.clock.now().getTime();
  const addressOf = (req: IncomingMessage) => clientAddress(req, config.trustedProxies);
  const server = edgeServer(app, config, logger, "public", now);
  const fdWarning = descriptorWarning(config.http, config.adminListener === null ? 1 : 2);
  if (fdWarning !== null) logger.warn(fdWarning);
  await listen(server, config.port, config.host);
  const port = (server.address() as AddressInfo).port;
  const baseUrl = config.publicBaseUrl ?? `http://127.0.0.1:${port}`;

  app.use(requestIds);
  // The budget key of who the request is from (TRUSTED_PROXIES applied, IPv6 per /64), for budgets kept by the
  // handlers themselves (static-assets.ts).
  const addressBudget: express.RequestHandler = (req, res, next) => {
    res.locals.addressBudget = throttleKey(addressOf(req));
    next();
  };
  app.use(addressBudget);
  // Request lines are for debugging (LOG_REQUESTS=1 or LOG_LEVEL debug): state changes and webhook attempts have
  // lines of their own. Not mounted otherwise: pino-http serialises every request up front, whatever the level
  // (about 8% of a generate request's CPU).
  if (logsRequests(config)) {
    app.use(
      pinoHttp({
        logger,
        ...requestLogOptions(),
        autoLogging: {
          ignore: (req) => req.url === "/healthz" || req.url === "/metrics" || (req.url ?? "").startsWith("/sim/"),
        },
      }),
    );
  }
  app.use(metrics.middleware());
  // Wrong bearer tokens (admin token guesses) per client address: 429 + retry-after once over the limit. Not on
  // the simulators' paths: they stand in for the upstreams, whose own bearer tokens (the network API's JWT) our
  // monitors send from this very address, so counting them would lock the demo's payments out.
  // One budget per address for every channel: this middleware on both listeners, and the websockets' connection_init.
  // /metrics judges its tokens itself (src/ops/scrape.ts).
  const credentialThrottle = new BearerThrottle(
    {
      isAdminToken: (token) => auth.isAdminToken(token),
      isClientToken: async (token) => (await auth.verifyClientToken(token)) !== null,
    },
    { maxFailures: config.adminThrottle.maxFailures, windowMs: config.adminThrottle.windowMs, addressOf },
  );
  const throttleBearers = credentialThrottle.middleware();
  const bearerThrottle: express.RequestHandler = (req, res, next) =>
    req.path.startsWith("/sim/") || SCRAPE_PATH.test(req.path) ? next() : throttleBearers(req, res, next);
  app.use(bearerThrottle);
  app.get("/healthz", (_req, res) => void res.json({ ok: true }));

  // The operator surfaces: on their own listener when ADMIN_PORT is set, else on the public one, with
  // /metrics behind a bearer token (METRICS_TOKEN or the admin token).
  const adminApp = config.adminListener === null ? app : edgeApp();
  const adminServer = adminApp === app ? null : edgeServer(adminApp, config, logger, "operator", now);
  if (adminServer !== null) {
    adminApp.use(metrics.middleware());
    adminApp.use(addressBudget);
    adminApp.use(bearerThrottle);
    adminApp.get("/healthz", (_req, res) => void res.json({ ok: true }));
  }
  const scrape = (accepts: ((token: string) => boolean) | null) =>
    scrapeRoute({ metrics, accepts, throttle: credentialThrottle, addressOf, now });
  if (adminServer !== null) adminApp.get("/metrics", scrape(null));
  else
    app.get(
      "/metrics",
      scrape(
        (token) => auth.isAdminToken(token) || (config.metricsToken !== null && sameToken(token, config.metricsToken)),
      ),
    );
  return { app, server, adminApp, adminServer, baseUrl, credentialThrottle, addressOf, now };
}

/** A caller's request id is echoed and logged only if it is short and plain; anything else gets our own. */
const requestIds: express.RequestHandler = (req, res, next) => {
  const given = req.headers["x-request-id"];
  const id = typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
  (req as { id?: string }).id = id;
  res.setHeader("x-request-id", id);
  // API answers are per caller and live: never stored by a cache (the dashboard's assets set their own).
  res.setHeader("cache-control", "no-store");
  next();
};

/** The last handlers of each listener (body errors, 404, 500); the operator listener starts listening here. */
export async function closeHttp(http: Http, config: Config, logger: Logger): Promise<void> {
  const { app, adminApp, adminServer } = http;
  const lastHandlers = (on: express.Express) => {
    on.use(bodyErrors);
    on.use(notFoundHandler());
    on.use(internalErrorHandler((err) => logger.error({ err }, "unhandled request error")));
  };
  if (adminServer !== null) {
    lastHandlers(adminApp);
    await listen(adminServer, config.adminListener!.port, config.adminListener!.host);
  }
  lastHandlers(app);
}

/** The operator listener's URL, or null when the operator surfaces are on the public port. */
export const adminUrlOf = (http: Http): string | null =>
  http.adminServer === null
    ? null
    : `http://127.0.0.1:${(http.adminServer.address() as AddressInfo | null)?.port ?? 0}`;

/** Both listeners closed; `force`: their open connections are cut (a start abandoned), else the public one drains. */
export async function closeListeners(http: Http, force: boolean): Promise<void> {
  for (const server of [http.server, http.adminServer])
    if (server?.listening) {
      if (force || server !== http.server) server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
}

/** The paths express routes to GET /metrics (case-insensitive, trailing slash allowed): the scrape judges their tokens. */
const SCRAPE_PATH = /^\/metrics\/?$/i;

/** What an x-request-id may be: 1–128 characters of a safe alphabet (no spaces, quotes, control characters). */
const REQUEST_ID = /^[A-Za-z0-9._:@+=/-]{1,128}$/;
