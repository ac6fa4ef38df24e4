import "reflect-metadata";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import express from "express";
import { pinoHttp } from "pino-http";
import type { Config } from "./config.js";
import { systemClock, type Clock } from "./clock.js";
import { createLogger, type Logger } from "./logger.js";
import { logsRequests, requestLogOptions } from "./logs/requests.js";
import { startEmbeddedDb, type EmbeddedDb } from "./db/embedded.js";
import { createOrm, migrate, pendingMigrations, underSchemaLock, type Orm } from "./db/orm.js";
import { Db } from "./db/sql.js";
import { TransactionStore } from "./transactions/transition.js";
import { TransactionQuery } from "./transactions/transaction-query.js";
import { Idempotency } from "./transactions/idempotency.js";
import { SecretBox } from "./auth/secret-box.js";
import { Invalidations } from "./cache/invalidation.js";
import { Authenticator } from "./auth/keys.js";
import { AdminService } from "./admin/admin-service.js";
import { Metrics } from "./ops/metrics.js";
import { buildAppSchema, printAppSchema } from "./graphql/schema.js";
import { ResolverContainer } from "./graphql/container.js";
import { createGraphQLEdge, type GraphQLEdge } from "./graphql/server.js";
import { graphqlBodyErrors } from "./graphql/http-errors.js";
import { bodyErrors, internalErrorHandler, jsonParser, notFoundHandler, restRouter } from "./rest/shim.js";
import { RateLimiter, rateLimitMiddleware } from "./rest/rate-limit.js";
import { capConnections, descriptorWarning, httpServerOptions } from "./rest/connection-caps.js";
import { BearerThrottle } from "./auth/bearer-throttle.js";
import { credentialsFromHeaders } from "./auth/credentials.js";
import { answerClientError } from "./rest/client-error.js";
import { Scheduler } from "./jobs/scheduler.js";
import { loadOrCreateSecrets } from "./auth/stored-secrets.js";
import { StartupError } from "./errors.js";
import { checkDataDir, databaseStartupError, listen } from "./startup.js";
import { dashboardRouter } from "./dashboard/index.js";
import { openApiDocument } from "./rest/openapi.js";
import { docsRouter } from "./rest/docs.js";
import { demoDocs } from "./rest/demo-examples.js";
import { explorerRouter } from "./graphql/explorer.js";
import { EVENT_DESCRIPTIONS, EVENT_TYPES } from "./transactions/transaction-event.entity.js";
import type { Module, ModuleDefinition } from "./module.js";
import { opsModule } from "./ops/index.js";
import { adminModule } from "./admin/index.js";
import { transactionsModule } from "./transactions/index.js";
import { EventBus, eventsModule } from "./events/index.js";
import { WEBHOOK_OUTBOX, webhooksModule } from "./webhooks/index.js";
import { qrModule } from "./qr/index.js";
import { gatewayModule } from "./gateway/index.js";
import { linkModule } from "./gateway-link/index.js";
import { checkoutModule } from "./checkout/index.js";

/**
 * The modules of the service, in the order their resolvers, routes and HTTP handlers are assembled.
 * Adding an area is a folder with an index.ts and one line here (docs/architecture.md).
 */
export const MODULES = [
  adminModule,
  opsModule,
  webhooksModule,
  eventsModule,
  transactionsModule,
  qrModule,
  gatewayModule,
  linkModule,
  checkoutModule,
] as const;

/** What the ORM maps: every module's tables. */
export const ENTITIES = MODULES.flatMap((m) => m.entities ?? []);
/** The eight REST paths of the contract, from the area modules. */
export const ROUTES = MODULES.flatMap((m) => m.routes ?? []);
const RESOLVER_CLASSES = MODULES.flatMap((m) => m.resolvers ?? []);
const WEBHOOK_EVENTS = EVENT_TYPES.map((type) => ({ type, description: EVENT_DESCRIPTIONS[type] }));
/** The REST contract's version in the OpenAPI document (paths carry none: the contract gives none). */
const API_VERSION = "1.0.0";

/** The OpenAPI document of the REST shim, built with no database (tests check every REST answer against it). */
export async function restOpenApi(): Promise<Record<string, unknown>> {
  return openApiDocument(await buildAppSchema(RESOLVER_CLASSES), ROUTES, WEBHOOK_EVENTS, API_VERSION);
}

/** What `npm run schema` writes to schema.graphql and the drift test compares. */
export function schemaSdl(): Promise<string> {
  return printAppSchema(RESOLVER_CLASSES);
}

export type Role = "serve" | "api" | "worker";

/** What every module may be given: the shared mechanisms, built once per process before the modules. */
export interface Core {
  config: Config;
  clock: Clock;
  logger: Logger;
  orm: Orm;
  db: Db;
  bus: EventBus;
  /** The write model: the one transition function. */
  store: TransactionStore;
  /** The read model: cursor pages and single transactions, scoped by principal. */
  query: TransactionQuery;
  idempotency: Idempotency;
  box: SecretBox;
  invalidations: Invalidations;
  auth: Authenticator;
  admin: AdminService;
  metrics: Metrics;
  /** The base URL this process is reachable at (simulator defaults, the demo banner). */
  baseUrl: string;
  /** Enqueue a one-off job (from api-only processes too: any worker picks the row up). */
  enqueue(name: string, data: Record<string, unknown>): Promise<void>;
  /** This process runs jobs (serve, worker): it delivers webhooks. */
  delivers: boolean;
  /** The database other processes' events are heard on; null on the embedded database (no cross-connection NOTIFY). */
  listenUrl: string | null;
}

export interface App {
  core: Core;
  /** A running module, by its definition (tests and the demo seed read the webhook endpoints, the browser pool…). */
  module<M extends Module>(definition: ModuleDefinition<never, M>): M;
  server: Server;
  url: string;
  /** The operator listener (ADMIN_PORT), or null when admin, dashboard and metrics are on the public port. */
  adminUrl: string | null;
  role: Role;
  embedded: boolean;
  ready(): Promise<{ ok: boolean; checks: Record<string, boolean> }>;
  /** With `deferStartup`: the caller's own start-up work (the demo tenant) is done; /readyz may answer 200. */
  startupDone(): void;
  stop(): Promise<void>;
}

export interface AppOptions {
  role?: Role;
  clock?: Clock;
  logger?: Logger;
  /** /readyz answers 503 (`checks.startup: false`) until startupDone() is called. */
  deferStartup?: boolean;
}

/** The composition root: config → db → core → modules → http → jobs (docs/architecture.md). */
export async function createApp(config: Config, opts: AppOptions = {}): Promise<App> {
  const role = opts.role ?? "serve";
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? createLogger(config);
  // The data directory holds the embedded database and the demo secrets: checked before anything is written.
  if (config.databaseUrl === null || config.adminToken === null || config.secretKey === null)
    checkDataDir(config.dataDir);
  const secrets = loadOrCreateSecrets(config.dataDir, { adminToken: config.adminToken, secretKey: config.secretKey });

  let embedded: EmbeddedDb | null = null;
  let dbUrl = config.databaseUrl;
  const ormPool = config.databaseUrl ? config.dbPoolSize : 4;
  const jobPool = config.databaseUrl ? Math.min(4, config.dbPoolSize) : 2;
  if (dbUrl === null) {
    if (role !== "serve")
      throw new Error(`Role "${role}" needs DATABASE_URL: the embedded database belongs to one process`);
    embedded = await startEmbeddedDb(config.dataDir, { onWarning: (msg, detail) => logger.warn(detail, msg) }).catch(
      (err: unknown) => {
        throw new StartupError(
          `The embedded database could not start in DATA_DIR ${config.dataDir} (${(err as Error).message}): ` +
            `point DATA_DIR at a writable directory, or set DATABASE_URL`,
          { cause: err },
        );
      },
    );
    dbUrl = embedded.url;
    if (config.nodeEnv === "production")
      logger.warn(
        "running in production on the embedded database (EMBEDDED_IN_PRODUCTION=1): one process, this disk, no replicas",
      );
  }
  const connectUrl = dbUrl;
  const orm = await createOrm(dbUrl, ormPool, ENTITIES).catch((err: unknown) => {
    throw databaseStartupError(err, config.databaseUrl);
  });
  const db = new Db(orm);
  const bus = new EventBus();
  const { expiryGraceMs, lateWatchMs, lateCheckIntervalMs } = config.network;
  const store = new TransactionStore(db, bus, clock, WEBHOOK_OUTBOX, {
    qr: { graceMs: expiryGraceMs, lateWatchMs, lateCheckMs: lateCheckIntervalMs },
    // The link's 180 s are hard (no grace); a PayWay payment is still polled after them for a late approval.
    gateway_link: { graceMs: 0, lateWatchMs: config.link.lateWatchMs, lateCheckMs: 3000 },
  });
  const box = new SecretBox(secrets.secretKey);
  const invalidations = new Invalidations();
  const auth = new Authenticator(db, box, clock, secrets.adminToken, invalidations);
  const admin = new AdminService(orm, box, invalidations, () => clock.now().getTime());
  const metrics = new Metrics(db);
  // Every role can enqueue jobs; only serve and worker process them. Agenda creates its table when it
  // connects, so that happens with our migrations under the schema lock.
  const jobs = await underSchemaLock(connectUrl, async () => {
    await migrate(orm);
    const s = new Scheduler(connectUrl, { logger, metrics, poolSize: jobPool });
    await s.ready();
    // The embedded database belongs to this process: a lock in it is a killed predecessor's (its monitors resume now).
    const left = embedded === null ? 0 : await s.releaseLeftLocks();
    if (left > 0)
      logger.warn({ jobs: left }, "released job locks left by a process that stopped without releasing them");
    return s;
  }).catch(async (err: unknown) => {
    await orm.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw databaseStartupError(err, config.databaseUrl);
  });

  const app = express();
  app.disable("x-powered-by");
  // No ETag on API answers: every one is a POST or a live status, so the per-response hash bought nothing.
  app.set("etag", false);
  app.set("trust proxy", false);
  const server = createServer(httpServerOptions(config.http), app);
  server.on("clientError", answerClientError);
  const now = () => clock.now().getTime();
  capConnections(server, config.http, logger, "public", now);
  const fdWarning = descriptorWarning(config.http, config.adminListener === null ? 1 : 2);
  if (fdWarning !== null) logger.warn(fdWarning);
  await listen(server, config.port, config.host).catch(async (err: unknown) => {
    await jobs.stop().catch(() => undefined);
    await orm.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw err;
  });
  const port = (server.address() as AddressInfo).port;
  const baseUrl = config.publicBaseUrl ?? `http://127.0.0.1:${port}`;

  const scheduler = role === "api" ? null : jobs;
  const query = new TransactionQuery(db, store, clock);
  const core: Core = {
    config,
    clock,
    logger,
    orm,
    db,
    bus,
    store,
    query,
    box,
    invalidations,
    auth,
    admin,
    metrics,
    baseUrl,
    idempotency: new Idempotency(db, clock),
    enqueue: (name, data) => jobs.now(name, data),
    delivers: scheduler !== null,
    listenUrl: embedded === null ? dbUrl : null,
  };
  const created = new Map<unknown, Module>(MODULES.map((def) => [def, def.create(core)]));
  const modules = [...created.values()];
  for (const m of modules) {
    const onEvent = m.onEvent;
    if (onEvent) bus.subscribe((e) => onEvent.call(m, e));
    if (scheduler !== null) for (const job of m.jobs ?? []) scheduler.define(job);
  }

  app.use((req, res, next) => {
    // A caller's request id is echoed and logged only if it is short and plain; anything else gets our own.
    const given = req.headers["x-request-id"];
    const id = typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    (req as { id?: string }).id = id;
    res.setHeader("x-request-id", id);
    // API answers are per caller and live: never stored by a cache (the dashboard's assets set their own).
    res.setHeader("cache-control", "no-store");
    next();
  });
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
  const credentialThrottle = new BearerThrottle(
    async (token) => auth.isAdminToken(token) || (await auth.verifyClientToken(token)) !== null,
    { maxFailures: config.adminThrottle.maxFailures, windowMs: config.adminThrottle.windowMs },
  );
  const throttleBearers = credentialThrottle.middleware();
  const bearerThrottle: express.RequestHandler = (req, res, next) =>
    req.path.startsWith("/sim/") ? next() : throttleBearers(req, res, next);
  app.use(bearerThrottle);

  app.get("/healthz", (_req, res) => void res.json({ ok: true }));
  let startupDone = opts.deferStartup !== true;
  // Ready means able to do the work, not only to connect: a write probe through a prepared statement, and
  // the recent statements of this process (decisions.md, "Readiness tells the truth").
  const ready = async () => {
    const checks: Record<string, boolean> = {};
    const details: Record<string, unknown> = {};
    const probe = await db.probe().then(
      () => null,
      (err: unknown) => err,
    );
    checks.database = probe === null;
    if (probe !== null) details.database = `the write probe failed: ${sqlState(probe)}`;
    const statements = db.health.verdict();
    checks.statements = statements.ok;
    if (!statements.ok) details.statements = statements;
    checks.migrations =
      checks.database &&
      (await pendingMigrations(orm).then(
        (n) => n === 0,
        () => false,
      ));
    checks.jobs = scheduler === null || scheduler.running;
    checks.startup = startupDone;
    for (const m of modules) Object.assign(details, m.readiness?.() ?? {});
    const ok = Object.values(checks).every(Boolean);
    return { ok, checks, ...(Object.keys(details).length > 0 ? { details } : {}) };
  };
  app.get("/readyz", async (_req, res) => {
    const r = await ready();
    res.status(r.ok ? 200 : 503).json(r);
  });
  // The operator surfaces: on their own listener when ADMIN_PORT is set, else on the public one, with
  // /metrics behind a bearer token (METRICS_TOKEN or the admin token).
  const adminApp = config.adminListener === null ? app : express();
  const adminServer = adminApp === app ? null : createServer(httpServerOptions(config.http), adminApp);
  if (adminServer !== null) {
    adminApp.disable("x-powered-by");
    adminApp.set("etag", false);
    adminApp.use(metrics.middleware());
    adminApp.use(bearerThrottle);
    adminApp.get("/healthz", (_req, res) => void res.json({ ok: true }));
  }
  const scrape = async (_req: express.Request, res: express.Response) => {
    res.setHeader("content-type", metrics.registry.contentType);
    res.setHeader("cache-control", "no-store");
    res.send(await metrics.registry.metrics());
  };
  if (adminServer !== null) adminApp.get("/metrics", scrape);
  else
    app.get("/metrics", (req, res, next) => {
      const token = credentialsFromHeaders(req.headers).bearer ?? "";
      const ok =
        token !== "" && (auth.isAdminToken(token) || (config.metricsToken !== null && token === config.metricsToken));
      if (ok) return void scrape(req, res).catch(next);
      res.setHeader("www-authenticate", 'Bearer realm="metrics"');
      res.status(401).json({
        error: {
          code: "UNAUTHENTICATED",
          message: "/metrics needs Authorization: Bearer <METRICS_TOKEN or ADMIN_TOKEN>",
          details: [],
        },
      });
    });

  let edge: GraphQLEdge | null = null;
  for (const m of modules) m.mount?.(app);
  if (role !== "worker") {
    // One limiter, keyed on the resolved principal, for HTTP here and for websocket operations in the edge.
    const limiter = config.rateLimit.perMinute > 0 ? new RateLimiter(config.rateLimit.perMinute) : null;
    if (limiter !== null)
      app.use(
        ["/qr", "/gateway", "/gateway-link", "/graphql", "/checkout/view", "/cards"],
        rateLimitMiddleware(limiter, (headers) => auth.fromCredentials(credentialsFromHeaders(headers))),
      );
    const container = new ResolverContainer(modules.flatMap((m) => m.resolvers ?? []));
    edge = await createGraphQLEdge(await buildAppSchema(RESOLVER_CLASSES), server, {
      auth,
      logger,
      container,
      exposeInternals: config.nodeEnv === "development" && config.logLevel === "debug",
      introspection: config.nodeEnv !== "production",
      invalidations,
      limiter,
      credentialThrottle,
      ws: config.ws,
      limits: config.graphql,
      now: () => clock.now().getTime(),
    });
    app.use(restRouter(ROUTES, edge));
    if (adminServer !== null) {
      // The admin token is accepted on the operator listener only.
      app.use("/graphql", (req, res, next) => {
        const token = credentialsFromHeaders(req.headers).bearer ?? "";
        if (token === "" || !auth.isAdminToken(token)) return next();
        res.status(403).json({
          errors: [
            {
              message: "The admin API is served on the operator listener (ADMIN_PORT)",
              extensions: { code: "FORBIDDEN" },
            },
          ],
        });
      });
      adminApp.use("/graphql", ...jsonParser("64kb"), edge.middleware, graphqlBodyErrors);
    }
    const schema = edge.schema;
    const demoFile = join(config.dataDir, "demo.json");
    app.use(
      docsRouter(
        () => openApiDocument(schema, ROUTES, WEBHOOK_EVENTS, API_VERSION),
        config.demo ? demoDocs(baseUrl, demoFile) : null,
      ),
    );
    // The offline explorer, where introspection is on (GraphiQL reads the schema by it).
    if (config.nodeEnv !== "production") app.use(explorerRouter({ demoFile: config.demo ? demoFile : null, schema }));
    app.use("/graphql", ...jsonParser("64kb"), edge.middleware, graphqlBodyErrors);
    adminApp.use("/dashboard", dashboardRouter({ simulators: config.simulators, baseUrl }));
  }
  if (adminServer !== null) {
    adminApp.use(bodyErrors);
    adminApp.use(notFoundHandler());
    adminApp.use(internalErrorHandler((err) => logger.error({ err }, "unhandled request error")));
    adminServer.on("clientError", answerClientError);
    capConnections(adminServer, config.http, logger, "operator", now);
    await listen(adminServer, config.adminListener!.port, config.adminListener!.host);
  }
  app.use(bodyErrors);
  app.use(notFoundHandler());
  app.use(internalErrorHandler((err) => logger.error({ err }, "unhandled request error")));

  for (const m of modules) await m.start?.();
  await scheduler?.start();

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      await edge?.dispose(); // stops taking requests, drains in-flight ones and websockets
      if (server.listening) await new Promise<void>((r) => server.close(() => r()));
      if (adminServer?.listening) {
        adminServer.closeAllConnections();
        await new Promise<void>((r) => adminServer.close(() => r()));
      }
      await jobs.pause();
      for (const m of modules) await m.handOver?.();
      await jobs.stop();
      for (const m of [...modules].reverse()) await m.stop?.();
      await orm.close();
      await embedded?.stop();
    })();
    return stopping;
  };
  const module = <M extends Module>(definition: ModuleDefinition<never, M>): M => created.get(definition) as M;
  return {
    core,
    module,
    server,
    adminUrl:
      adminServer === null ? null : `http://127.0.0.1:${(adminServer.address() as AddressInfo | null)?.port ?? 0}`,
    url: baseUrl,
    role,
    embedded: embedded !== null,
    ready,
    startupDone: () => void (startupDone = true),
    stop,
  };
}

/** What an x-request-id may be: 1–128 characters of a safe alphabet (no spaces, quotes, control characters). */
const REQUEST_ID = /^[A-Za-z0-9._:@+=/-]{1,128}$/;

function sqlState(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? `SQLSTATE ${code}` : err instanceof Error ? err.name : "unknown error";
}
