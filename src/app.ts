import "reflect-metadata";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import express from "express";
import { pinoHttp } from "pino-http";
import { EnvReader, type Config } from "./config.js";
import { systemClock, type Clock } from "./clock.js";
import { createLogger, type Logger } from "./logger.js";
import { logsRequests, requestLogOptions } from "./logs/requests.js";
import { startEmbeddedDb, type EmbeddedDb } from "./db/embedded.js";
import { lockDataDir, ownsDataDir, type DataDirLock } from "./db/data-dir-lock.js";
import { createOrm, migrate, pendingMigrations, underSchemaLock, type Orm } from "./db/orm.js";
import { Db } from "./db/sql.js";
import { TransactionStore } from "./transactions/transition.js";
import { TransactionQuery } from "./transactions/transaction-query.js";
import { Idempotency } from "./transactions/idempotency.js";
import { RecheckRegistry } from "./transactions/recheck.js";
import { AREA_ENUM } from "./transactions/transaction.types.js";
import { EXPORT_PATH, exportRoute } from "./transactions/export-route.js";
import { KEY_KIND_ENUM } from "./admin/admin.types.js";
import { SecretBox } from "./auth/secret-box.js";
import { Invalidations } from "./cache/invalidation.js";
import { Authenticator } from "./auth/keys.js";
import { KeyKinds } from "./auth/key-kinds.js";
import { AdminService } from "./admin/admin-service.js";
import { Metrics } from "./ops/metrics.js";
import { buildAppSchema, printAppSchema } from "./graphql/schema.js";
import { AreaViews } from "./transactions/area-views.js";
import { areaFieldResolvers } from "./transactions/area-fields.js";
import type { EnumValues } from "./graphql/listed-enums.js";
import { ResolverContainer } from "./graphql/container.js";
import { createGraphQLEdge, type GraphQLEdge } from "./graphql/server.js";
import { graphqlBodyErrors } from "./graphql/http-errors.js";
import { bodyErrors, internalErrorHandler, jsonParser, notFoundHandler, restRouter } from "./rest/shim.js";
import { RateLimiter, rateLimitMiddleware } from "./rest/rate-limit.js";
import { capConnections, descriptorWarning, httpServerOptions } from "./rest/connection-caps.js";
import { boundSlowReaders } from "./rest/slow-readers.js";
import { BearerThrottle, throttleKey } from "./auth/bearer-throttle.js";
import { clientAddress } from "./auth/client-address.js";
import { scrapeRoute } from "./ops/scrape.js";
import { credentialsFromHeaders } from "./auth/credentials.js";
import { answerClientError } from "./rest/client-error.js";
import { Scheduler } from "./jobs/scheduler.js";
import { loadOrCreateSecrets } from "./auth/stored-secrets.js";
import { StartupError } from "./errors.js";
import { checkDataDir, databaseStartupError, listen } from "./startup.js";
import { dashboardRouter, type DashboardArea, type DashboardOptions } from "./dashboard/index.js";
import { openApiDocument } from "./rest/openapi.js";
import { docsRouter } from "./rest/docs.js";
import { demoDocs } from "./rest/demo-examples.js";
import { explorerRouter } from "./graphql/explorer.js";
import { UpstreamOrigins } from "./upstreams/origins.js";
import { EVENT_DESCRIPTIONS, EVENT_TYPES } from "./transactions/transaction-event.entity.js";
import type { AreaDefinition, Module, ModuleDefinition } from "./module.js";
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

/**
 * A list of modules: `createApp` hands each one the core, which satisfies every module's deps interface (a module
 * asking for something the core lacks does not compile where it is listed).
 */
export type ModuleList = readonly ModuleDefinition<Core, Module, unknown>[];

/** The areas of a module list, in its order. */
export const areasOf = (modules: ModuleList): AreaDefinition[] => modules.flatMap((m) => (m.area ? [m.area] : []));
/** The kinds of API key a module list's areas declare. */
export const keyKindsOf = (modules: ModuleList): KeyKinds => new KeyKinds(areasOf(modules).map((a) => a.key));
/** What the ORM maps: every module's tables. */
export const entitiesOf = (modules: ModuleList) => modules.flatMap((m) => m.entities ?? []);
/** The modules' own migrations, after the central ones (src/db/migrations), in module order. */
export const migrationsOf = (modules: ModuleList) => modules.flatMap((m) => m.migrations ?? []);
const routesOf = (modules: ModuleList) => modules.flatMap((m) => m.routes ?? []);
/** What the areas of a module list keep and show of their transactions (AreaDefinition.data). */
export const areaViewsOf = (modules: ModuleList): AreaViews =>
  new AreaViews(areasOf(modules).map((a) => ({ kind: a.key.kind, data: a.data })));
/** The modules' resolver classes, and the ones that add the areas' fields to the transaction types. */
const resolversOf = (modules: ModuleList) => [
  ...modules.flatMap((m) => m.resolvers ?? []),
  ...areaFieldResolvers(areaViewsOf(modules)),
];

/** What the ORM maps: every module's tables. */
export const ENTITIES = entitiesOf(MODULES);
/** The migrations the modules of MODULES bring. */
export const MODULE_MIGRATIONS = migrationsOf(MODULES);
/** The eight REST paths of the contract, from the area modules. */
export const ROUTES = routesOf(MODULES);
const WEBHOOK_EVENTS = EVENT_TYPES.map((type) => ({ type, description: EVENT_DESCRIPTIONS[type] }));
/** The REST contract's version in the OpenAPI document (paths carry none: the contract gives none). */
const API_VERSION = "1.0.0";

/** The GraphQL enums listing the areas (`Area`, `KeyKind`), with the values of a module list. */
function listedEnums(modules: ModuleList): EnumValues[] {
  const keys = areasOf(modules).map((a) => a.key);
  const kinds = keys.map((k) => k.kind);
  const where = keys
    .map((k, i) => `${k.kind} → ${k.paths.replace(/\/\*$/, "")} (${i === 0 ? "x-auth-type " : ""}${k.authType})`)
    .join("; ");
  return [
    { enum: AREA_ENUM, values: kinds },
    { enum: KEY_KIND_ENUM, values: kinds, description: where },
  ];
}

/** The schema of a module list (the GraphQL edge's, and what `npm run schema` prints). */
const schemaOf = (modules: ModuleList) => buildAppSchema(resolversOf(modules), listedEnums(modules));

/** The OpenAPI document of the REST shim, built with no database (tests check every REST answer against it). */
export async function restOpenApi(modules: ModuleList = MODULES): Promise<Record<string, unknown>> {
  return openApiDocument(await schemaOf(modules), routesOf(modules), WEBHOOK_EVENTS, API_VERSION, areasOf(modules));
}

/** What `npm run schema` writes to schema.graphql and the drift test compares. */
export function schemaSdl(modules: ModuleList = MODULES): Promise<string> {
  return printAppSchema(resolversOf(modules), listedEnums(modules));
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
  /** Each area registers what asking its upstream again about one payment is (transactions/recheck.ts). */
  rechecks: RecheckRegistry;
  box: SecretBox;
  invalidations: Invalidations;
  auth: Authenticator;
  admin: AdminService;
  metrics: Metrics;
  /** The kinds of API key of this app's areas. */
  kinds: KeyKinds;
  /** Where an upstream answers when its configuration names no address (demo mode's simulators register here). */
  upstreamOrigins: UpstreamOrigins;
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
  module<M extends Module>(definition: ModuleDefinition<never, M, unknown>): M;
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
  /** The modules to assemble (default MODULES): demo mode adds its own, a test may add an area. */
  modules?: ModuleList;
  /** Where the modules' own settings are read from (`ModuleDefinition.settings`); process.env by default. */
  env?: Record<string, string | undefined>;
}

/**
 * The composition root (docs/architecture.md), in four named parts: `openStorage` (the database, migrations and
 * the job scheduler), `buildCore` (the shared mechanisms every module may be given), `openHttp` (the listeners and
 * the HTTP edge every request passes: request ids, logs, throttles, health, metrics) and `mountModules` (what the
 * modules serve: their handlers, the GraphQL edge, the REST paths, the docs and the dashboard); then the modules
 * start, and `stopApp` ends it all in reverse.
 */
export async function createApp(config: Config, opts: AppOptions = {}): Promise<App> {
  const defs: ModuleList = opts.modules ?? MODULES;
  // Read before anything starts: a module's bad setting stops the start as a bad variable of loadConfig does.
  const env = new EnvReader(opts.env ?? process.env);
  const settings = new Map(defs.map((def) => [def, def.settings?.(env, config)]));
  const role = opts.role ?? "serve";
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? createLogger(config);
  const storage = await openStorage(config, role, logger, defs);
  const scheduler = role === "api" ? null : storage.jobs;
  const shared = buildCore(config, storage, { clock, logger, defs, settings, delivers: scheduler !== null });
  const http = await openHttp(config, shared).catch(async (err: unknown) => {
    await storage.close();
    throw err;
  });
  const core: Core = { ...shared, baseUrl: http.baseUrl };
  const created = new Map<unknown, Module>(defs.map((def) => [def, def.create(core, settings.get(def))]));
  const modules = [...created.values()];
  for (const m of modules) {
    const onEvent = m.onEvent;
    if (onEvent) core.bus.subscribe((e) => onEvent.call(m, e));
    if (scheduler !== null) for (const job of m.jobs ?? []) scheduler.define(job);
  }
  let startupDone = opts.deferStartup !== true;
  const ready = readiness(storage, scheduler, modules, () => startupDone);
  http.app.get("/readyz", async (_req, res) => {
    const r = await ready();
    res.status(r.ok ? 200 : 503).json(r);
  });
  let edge: GraphQLEdge | null = null;
  try {
    edge = await mountModules(http, core, defs, modules, role);
    await closeHttpEdge(http, config, logger);
    for (const m of modules) await m.start?.();
    await scheduler?.start();
  } catch (err) {
    // A start that fails half-way leaves nothing open: listeners, database and the DATA_DIR lock are given back,
    // so the same process may start again (a test, an embedder).
    await abandonStart(http, edge, storage);
    throw err;
  }

  let stopping: Promise<void> | null = null;
  const stop = () => (stopping ??= stopApp(http, edge, storage, modules));
  const module = <M extends Module>(definition: ModuleDefinition<never, M, unknown>): M => created.get(definition) as M;
  return {
    core,
    module,
    server: http.server,
    adminUrl:
      http.adminServer === null
        ? null
        : `http://127.0.0.1:${(http.adminServer.address() as AddressInfo | null)?.port ?? 0}`,
    url: http.baseUrl,
    role,
    embedded: storage.embedded !== null,
    ready,
    startupDone: () => void (startupDone = true),
    stop,
  };
}

/** The database (DATABASE_URL, or the embedded one in DATA_DIR), its migrations and the job scheduler. */
interface Storage {
  embedded: EmbeddedDb | null;
  /** The database URL this process connects to. */
  url: string;
  orm: Orm;
  db: Db;
  metrics: Metrics;
  jobs: Scheduler;
  secrets: { adminToken: string; secretKey: string };
  /** DATA_DIR's lock, when this process owns the directory (released last, once the database is closed). */
  lock: DataDirLock | null;
  close(): Promise<void>;
}

async function openStorage(config: Config, role: Role, logger: Logger, defs: ModuleList): Promise<Storage> {
  if (config.databaseUrl === null && role !== "serve")
    throw new Error(`Role "${role}" needs DATABASE_URL: the embedded database belongs to one process`);
  // The data directory holds the embedded database, demo.json and the demo secrets: checked before anything is written.
  const generatesSecrets = config.adminToken === null || config.secretKey === null;
  if (generatesSecrets || ownsDataDir(config, role)) checkDataDir(config.dataDir);
  // One process per data directory (decision 0166): its lock comes before anything in it is read or opened.
  const lock = await lockDataDir(config, role);
  try {
    return await openStorageLocked(config, role, logger, defs, lock);
  } catch (err) {
    lock?.release();
    throw err;
  }
}

async function openStorageLocked(
  config: Config,
  role: Role,
  logger: Logger,
  defs: ModuleList,
  lock: DataDirLock | null,
): Promise<Storage> {
  const secrets = loadOrCreateSecrets(config.dataDir, { adminToken: config.adminToken, secretKey: config.secretKey });
  const ormPool = config.databaseUrl ? config.dbPoolSize : 4;
  const jobPool = config.databaseUrl ? Math.min(4, config.dbPoolSize) : 2;
  const embedded = config.databaseUrl === null ? await startEmbedded(config, logger) : null;
  const url = config.databaseUrl ?? (embedded as EmbeddedDb).url;
  const orm = await createOrm(url, ormPool, entitiesOf(defs), migrationsOf(defs)).catch(async (err: unknown) => {
    await embedded?.stop().catch(() => undefined);
    throw databaseStartupError(err, config.databaseUrl);
  });
  // Every role can enqueue jobs; only serve and worker process them. Agenda creates its table when it
  // connects, so that happens with our migrations under the schema lock.
  const db = new Db(orm);
  const metrics = new Metrics(db);
  const jobs = await underSchemaLock(url, async () => {
    await migrate(orm);
    const s = new Scheduler(url, { logger, metrics, poolSize: jobPool });
    await s.ready();
    // The embedded database belongs to this process (DATA_DIR's lock): a job lock in it is a killed predecessor's.
    const left = embedded === null ? 0 : await s.releaseLeftLocks();
    if (left > 0)
      logger.warn({ jobs: left }, "released job locks left by a process that stopped without releasing them");
    return s;
  }).catch(async (err: unknown) => {
    await orm.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw databaseStartupError(err, config.databaseUrl);
  });
  return {
    embedded,
    url,
    orm,
    db,
    metrics,
    jobs,
    secrets,
    lock,
    async close() {
      await jobs.stop().catch(() => undefined);
      await orm.close().catch(() => undefined);
      await embedded?.stop().catch(() => undefined);
      lock?.release();
    },
  };
}

async function startEmbedded(config: Config, logger: Logger): Promise<EmbeddedDb> {
  const embedded = await startEmbeddedDb(config.dataDir, {
    onWarning: (msg, detail) => logger.warn(detail, msg),
  }).catch((err: unknown) => {
    throw new StartupError(
      `The embedded database could not start in DATA_DIR ${config.dataDir} (${(err as Error).message}): ` +
        `point DATA_DIR at a writable directory, or set DATABASE_URL`,
      { cause: err },
    );
  });
  if (config.nodeEnv === "production")
    logger.warn(
      "running in production on the embedded database (EMBEDDED_IN_PRODUCTION=1): one process, this disk, no replicas",
    );
  return embedded;
}

/** The shared mechanisms, built once per process before the modules (docs/architecture.md, "What a module is"). */
function buildCore(
  config: Config,
  storage: Storage,
  p: { clock: Clock; logger: Logger; defs: ModuleList; settings: Map<unknown, unknown>; delivers: boolean },
): Omit<Core, "baseUrl"> {
  const { clock } = p;
  const { db, orm, jobs } = storage;
  const bus = new EventBus();
  // An area's expiry rules are its own settings: each is given what its module's `settings` read.
  const expiry = Object.fromEntries(
    p.defs.flatMap((def) => {
      const area = def.area;
      return area?.expiry === undefined ? [] : [[area.key.kind, area.expiry(p.settings.get(def))]];
    }),
  );
  const store = new TransactionStore(db, bus, clock, WEBHOOK_OUTBOX, expiry, areaViewsOf(p.defs));
  const box = new SecretBox(storage.secrets.secretKey);
  const invalidations = new Invalidations();
  const kinds = keyKindsOf(p.defs);
  return {
    config,
    clock,
    logger: p.logger,
    orm,
    db,
    bus,
    store,
    query: new TransactionQuery(db, store, clock),
    box,
    invalidations,
    auth: new Authenticator(db, box, clock, storage.secrets.adminToken, kinds, invalidations),
    admin: new AdminService(
      orm,
      box,
      kinds,
      invalidations,
      () => clock.now().getTime(),
      config.publicBaseUrl ?? "http://127.0.0.1",
    ),
    metrics: storage.metrics,
    kinds,
    upstreamOrigins: new UpstreamOrigins(),
    idempotency: new Idempotency(db, clock),
    rechecks: new RecheckRegistry(),
    enqueue: (name, data) => jobs.now(name, data),
    delivers: p.delivers,
    listenUrl: storage.embedded === null ? storage.url : null,
  };
}

/** The HTTP side every request passes before any module's handler: listeners, request ids, logs, throttles. */
interface Http {
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

async function openHttp(config: Config, core: Omit<Core, "baseUrl">): Promise<Http> {
  const { logger, metrics, auth } = core;
  const app = express();
  app.disable("x-powered-by");
  // No ETag on API answers: every one is a POST or a live status, so the per-response hash bought nothing.
  app.set("etag", false);
  app.set("trust proxy", false);
  const server = createServer(httpServerOptions(config.http), app);
  server.on("clientError", answerClientError);
  const now = () => core.clock.now().getTime();
  const addressOf = (req: IncomingMessage) => clientAddress(req, config.trustedProxies);
  capConnections(server, config.http, logger, "public", now, config.trustedProxies);
  boundSlowReaders(server, config.http, logger, "public");
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
  const adminApp = config.adminListener === null ? app : express();
  const adminServer = adminApp === app ? null : createServer(httpServerOptions(config.http), adminApp);
  if (adminServer !== null) {
    adminApp.disable("x-powered-by");
    adminApp.set("etag", false);
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
      scrape((token) => auth.isAdminToken(token) || (config.metricsToken !== null && token === config.metricsToken)),
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

/**
 * What /readyz answers. Ready means able to do the work, not only to connect: a write probe through a prepared
 * statement, and the recent statements of this process (docs/decisions/0091-readiness-tells-the-truth.md).
 */
function readiness(storage: Storage, scheduler: Scheduler | null, modules: Module[], startupDone: () => boolean) {
  const { db, orm } = storage;
  return async () => {
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
    checks.startup = startupDone();
    for (const m of modules) Object.assign(details, m.readiness?.() ?? {});
    const ok = Object.values(checks).every(Boolean);
    return { ok, checks, ...(Object.keys(details).length > 0 ? { details } : {}) };
  };
}

/**
 * What the modules serve: their own handlers (simulators, the pushback, the card), then — where this role
 * answers API requests — the rate limiter on the prefixes they declare, the GraphQL edge, the REST paths, the docs
 * and the dashboard.
 */
async function mountModules(
  http: Http,
  core: Core,
  defs: ModuleList,
  modules: Module[],
  role: Role,
): Promise<GraphQLEdge | null> {
  const { app, adminApp, adminServer } = http;
  const { config, auth, logger, clock } = core;
  for (const m of modules) m.mount?.(app);
  if (role === "worker") return null;
  // One limiter, keyed on the resolved principal, for HTTP here and for websocket operations in the edge.
  const limiter = config.rateLimit.perMinute > 0 ? new RateLimiter(config.rateLimit.perMinute) : null;
  if (limiter !== null)
    app.use(
      ["/graphql", ...defs.flatMap((d) => d.rateLimited ?? [])],
      rateLimitMiddleware(limiter, (headers) => auth.fromCredentials(credentialsFromHeaders(headers)), http.addressOf),
    );
  const container = new ResolverContainer([
    ...modules.flatMap((m) => m.resolvers ?? []),
    ...areaFieldResolvers(areaViewsOf(defs)).map((cls) => new cls()),
  ]);
  const edge = await createGraphQLEdge(await schemaOf(defs), http.server, {
    auth,
    logger,
    container,
    exposeInternals: config.nodeEnv === "development" && config.logLevel === "debug",
    introspection: config.nodeEnv !== "production",
    invalidations: core.invalidations,
    limiter,
    credentialThrottle: http.credentialThrottle,
    addressOf: http.addressOf,
    ws: config.ws,
    limits: config.graphql,
    now: () => clock.now().getTime(),
  });
  app.use(restRouter(routesOf(defs), edge, core.kinds));
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
  const areas = areasOf(defs);
  app.use(
    docsRouter(
      () => openApiDocument(schema, routesOf(defs), WEBHOOK_EVENTS, API_VERSION, areas),
      config.demo ? demoDocs(http.baseUrl, demoFile, areas) : null,
    ),
  );
  // The offline explorer, where introspection is on (GraphiQL reads the schema by it).
  if (config.nodeEnv !== "production") app.use(explorerRouter({ demoFile: config.demo ? demoFile : null, schema }));
  app.use("/graphql", ...jsonParser("64kb"), edge.middleware, graphqlBodyErrors);
  // The reconciliation export (decision 0155): operators only; its area filter knows this module list's areas.
  adminApp.get(
    EXPORT_PATH,
    exportRoute({
      query: core.query,
      isAdmin: (req) => {
        const token = credentialsFromHeaders(req.headers).bearer ?? "";
        return token !== "" && auth.isAdminToken(token);
      },
      areas: core.kinds.kinds(),
    }),
  );
  adminApp.use(
    "/dashboard",
    dashboardRouter({
      simulators: config.simulators,
      baseUrl: http.baseUrl,
      areas: dashboardAreas(areas),
      controls: Object.assign({}, ...modules.map((m) => m.simulatorControls ?? {})) as DashboardOptions["controls"],
    }),
  );
  return edge;
}

/** The areas as the dashboard's pages see them (its config.json). */
function dashboardAreas(areas: AreaDefinition[]): DashboardArea[] {
  return areas.map(({ key, dashboard }) => ({
    kind: key.kind,
    label: dashboard?.label ?? key.kind,
    authType: key.authType,
    target:
      key.target === undefined || dashboard?.target === undefined
        ? null
        : { field: key.target.field, ...dashboard.target },
  }));
}

/** The last handlers of each listener (body errors, 404, 500); the operator listener starts listening here. */
async function closeHttpEdge(http: Http, config: Config, logger: Logger): Promise<void> {
  const { app, adminApp, adminServer } = http;
  if (adminServer !== null) {
    adminApp.use(bodyErrors);
    adminApp.use(notFoundHandler());
    adminApp.use(internalErrorHandler((err) => logger.error({ err }, "unhandled request error")));
    adminServer.on("clientError", answerClientError);
    capConnections(adminServer, config.http, logger, "operator", http.now, config.trustedProxies);
    boundSlowReaders(adminServer, config.http, logger, "operator");
    await listen(adminServer, config.adminListener!.port, config.adminListener!.host);
  }
  app.use(bodyErrors);
  app.use(notFoundHandler());
  app.use(internalErrorHandler((err) => logger.error({ err }, "unhandled request error")));
}

/**
 * Shutdown: stop taking requests (draining in-flight ones and websockets), stop taking jobs, let the modules hand
 * their running work over, stop the jobs, the modules (in reverse), the database.
 */
async function stopApp(http: Http, edge: GraphQLEdge | null, storage: Storage, modules: Module[]): Promise<void> {
  const { server, adminServer } = http;
  await edge?.dispose();
  if (server.listening) await new Promise<void>((r) => server.close(() => r()));
  if (adminServer?.listening) {
    adminServer.closeAllConnections();
    await new Promise<void>((r) => adminServer.close(() => r()));
  }
  await storage.jobs.pause();
  for (const m of modules) await m.handOver?.();
  await storage.jobs.stop();
  try {
    for (const m of [...modules].reverse()) await m.stop?.();
    await storage.orm.close();
    await storage.embedded?.stop();
  } finally {
    storage.lock?.release();
  }
}

/** A start that failed after the listeners opened: they close, then the storage (its lock last, storage.close). */
async function abandonStart(http: Http, edge: GraphQLEdge | null, storage: Storage): Promise<void> {
  await edge?.dispose().catch(() => undefined);
  for (const server of [http.server, http.adminServer])
    if (server?.listening) {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  await storage.close();
}

/** The paths express routes to GET /metrics (case-insensitive, trailing slash allowed): the scrape judges their tokens. */
const SCRAPE_PATH = /^\/metrics\/?$/i;

/** What an x-request-id may be: 1–128 characters of a safe alphabet (no spaces, quotes, control characters). */
const REQUEST_ID = /^[A-Za-z0-9._:@+=/-]{1,128}$/;

function sqlState(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? `SQLSTATE ${code}` : err instanceof Error ? err.name : "unknown error";
}
