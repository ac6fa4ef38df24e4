import "reflect-metadata";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import express from "express";
import { pinoHttp } from "pino-http";
import type { Config } from "./config.js";
import { systemClock, type Clock } from "./clock.js";
import { createLogger, type Logger } from "./logger.js";
import { startEmbeddedDb, type EmbeddedDb } from "./db/embedded.js";
import { createOrm, migrate, pendingMigrations, underSchemaLock } from "./db/orm.js";
import { Db } from "./db/sql.js";
import { EventBus } from "./transactions/event-bus.js";
import { TransactionStore } from "./transactions/transition.js";
import { EventListener } from "./transactions/event-listener.js";
import { LiveEvents } from "./transactions/live-events.js";
import { TransactionQuery } from "./transactions/transaction-query.js";
import { Idempotency } from "./transactions/idempotency.js";
import { QrService } from "./qr/qr-service.js";
import { SecretBox } from "./auth/secret-box.js";
import { Invalidations } from "./cache/invalidation.js";
import { Authenticator } from "./auth/keys.js";
import { AdminService } from "./admin/admin-service.js";
import { Metrics } from "./ops/metrics.js";
import { appSchema } from "./graphql/schema.js";
import { createGraphQLEdge, type GraphQLEdge } from "./graphql/server.js";
import { graphqlBodyErrors } from "./graphql/http-errors.js";
import { bodyErrors, internalErrorHandler, jsonParser, notFoundHandler, restRouter } from "./rest/shim.js";
import { ROUTES } from "./rest/route-table.js";
import { RateLimiter } from "./rest/rate-limit.js";
import { answerClientError } from "./rest/client-error.js";
import { Scheduler } from "./jobs/scheduler.js";
import { WebhookEndpointService } from "./webhooks/endpoint-service.js";
import { WebhookDispatcher } from "./webhooks/dispatcher.js";
import { loadOrCreateSecrets } from "./demo/secrets.js";
import { StartupError } from "./errors.js";
import { checkDataDir, databaseStartupError, listen } from "./startup.js";
import { chromiumMissing } from "./gateway-link/link-service.js";
import type { Services } from "./services.js";
import { mountAreas, type AreaHandles } from "./areas.js";
import { dashboardRouter } from "./dashboard/index.js";

export type Role = "serve" | "api" | "worker";

export interface App {
  services: Services;
  server: Server;
  url: string;
  role: Role;
  embedded: boolean;
  areas: AreaHandles;
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

/** The composition root: config → db → events → services → http → jobs (DESIGN.md "Modules"). */
export async function createApp(config: Config, opts: AppOptions = {}): Promise<App> {
  const role = opts.role ?? "serve";
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? createLogger(config);
  // The data directory holds the embedded database and the demo secrets: checked before anything is written.
  if (config.databaseUrl === null || config.adminToken === null || config.secretKey === null) checkDataDir(config.dataDir);
  const secrets = loadOrCreateSecrets(config.dataDir, { adminToken: config.adminToken, secretKey: config.secretKey });

  let embedded: EmbeddedDb | null = null;
  let dbUrl = config.databaseUrl;
  const ormPool = config.databaseUrl ? config.dbPoolSize : 4;
  const jobPool = config.databaseUrl ? Math.min(4, config.dbPoolSize) : 2;
  if (dbUrl === null) {
    if (role !== "serve") throw new Error(`Role "${role}" needs DATABASE_URL: the embedded database belongs to one process`);
    embedded = await startEmbeddedDb(config.dataDir, { onWarning: (msg, detail) => logger.warn(detail, msg) }).catch((err: unknown) => {
      throw new StartupError(`The embedded database could not start in DATA_DIR ${config.dataDir} (${(err as Error).message}): point DATA_DIR at a writable directory, or set DATABASE_URL`, { cause: err });
    });
    dbUrl = embedded.url;
  }
  const connectUrl = dbUrl;
  const orm = await createOrm(dbUrl, ormPool).catch((err: unknown) => {
    throw databaseStartupError(err, config.databaseUrl);
  });
  const db = new Db(orm);
  const bus = new EventBus();
  const store = new TransactionStore(db, bus, clock);
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
    return s;
  }).catch(async (err: unknown) => {
    await orm.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw databaseStartupError(err, config.databaseUrl);
  });
  bus.subscribe((e) => metrics.transitions.inc({ area: e.area, type: e.type }));

  const app = express();
  app.disable("x-powered-by");
  // No ETag on API answers: every one is a POST or a live status, so the per-response hash bought nothing.
  app.set("etag", false);
  app.set("trust proxy", false);
  const server = createServer(app);
  server.on("clientError", answerClientError);
  await listen(server, config.port, config.host).catch(async (err: unknown) => {
    await jobs.stop().catch(() => undefined);
    await orm.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw err;
  });
  const port = (server.address() as AddressInfo).port;
  const baseUrl = config.publicBaseUrl ?? `http://127.0.0.1:${port}`;

  const webhooks = new WebhookEndpointService(orm, db, box, clock, config.webhooks.allowPrivateUrls);
  const scheduler = role === "api" ? null : jobs;
  const dispatcher = scheduler === null ? null : new WebhookDispatcher(db, webhooks, clock, logger, metrics, config.webhooks);
  const transactions = new TransactionQuery(db, store, clock);
  const services: Services = { config, clock, logger, orm, db, bus, store, auth, box, admin, metrics, baseUrl, webhooks, dispatcher, live: new LiveEvents(store, bus, transactions),
    transactions,
    idempotency: new Idempotency(db, clock), qr: new QrService(store, admin, auth, clock),
    enqueue: (name, data) => jobs.now(name, data),
    // Filled in by mountAreas, which owns the upstream clients and the browser pool.
    gateway: undefined as unknown as Services["gateway"], link: undefined as unknown as Services["link"] };
  if (dispatcher !== null && scheduler !== null) {
    // Committed events in this process are delivered at once; the recurring job picks up retries and
    // events committed by other processes.
    // An event known to have no delivery rows (no matching endpoint) needs no pass: under load that was one
    // claim query per committed event.
    bus.subscribe((e) => {
      if (e.deliveries !== 0) void dispatcher.kick().catch((err) => logger.warn({ err }, "webhook dispatch failed"));
    });
    scheduler.define({ name: "webhooks.dispatch", every: "1 second", lockLifetimeMs: 30_000, run: () => dispatcher.kick() });
  }
  const listener = embedded === null ? new EventListener(dbUrl, store, bus, logger, invalidations) : null;

  app.use((req, res, next) => {
    const id = (req.headers["x-request-id"] as string | undefined) ?? randomUUID();
    (req as { id?: string }).id = id;
    res.setHeader("x-request-id", id);
    next();
  });
  // pino-http serialises every request into a child logger up front, whatever the level; at "silent" nothing
  // could ever be written, so it is not mounted (about 8% of a generate request's CPU).
  if (config.logLevel !== "silent") {
    app.use(pinoHttp({ logger, autoLogging: { ignore: (req) => req.url === "/healthz" || req.url === "/metrics" || (req.url ?? "").startsWith("/sim/") } }));
  }
  app.use(metrics.middleware());

  app.get("/healthz", (_req, res) => void res.json({ ok: true }));
  let startupDone = opts.deferStartup !== true;
  // Ready means able to do the work, not only to connect: a write probe through a prepared statement, and
  // the recent statements of this process (decisions.md, "Readiness tells the truth").
  const ready = async () => {
    const checks: Record<string, boolean> = {};
    const details: Record<string, unknown> = {};
    const probe = await db.probe().then(() => null, (err: unknown) => err);
    checks.database = probe === null;
    if (probe !== null) details.database = `the write probe failed: ${sqlState(probe)}`;
    const statements = db.health.verdict();
    checks.statements = statements.ok;
    if (!statements.ok) details.statements = statements;
    checks.migrations = checks.database && (await pendingMigrations(orm).then((n) => n === 0, () => false));
    checks.jobs = scheduler === null || scheduler.running;
    checks.startup = startupDone;
    const ok = Object.values(checks).every(Boolean);
    return { ok, checks, ...(Object.keys(details).length > 0 ? { details } : {}) };
  };
  app.get("/readyz", async (_req, res) => {
    const r = await ready();
    res.status(r.ok ? 200 : 503).json(r);
  });
  app.get("/metrics", async (_req, res) => {
    res.setHeader("content-type", metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });

  let edge: GraphQLEdge | null = null;
  const areas = await mountAreas({ app, services, scheduler, role });
  if (!areas.pool.executableAvailable()) logger.warn({ chromiumPath: config.link.chromiumPath }, chromiumMissing(config.link.chromiumPath));
  if (role !== "worker") {
    if (config.rateLimit.perMinute > 0) app.use(["/qr", "/gateway", "/gateway-link", "/graphql"], new RateLimiter(config.rateLimit.perMinute).middleware());
    edge = await createGraphQLEdge(await appSchema(), server, services);
    app.use(restRouter(ROUTES, edge));
    app.use("/graphql", ...jsonParser("64kb"), edge.middleware, graphqlBodyErrors);
    app.use("/dashboard", dashboardRouter({ simulators: config.simulators, baseUrl }));
  }
  app.use(bodyErrors);
  app.use(notFoundHandler());
  app.use(internalErrorHandler((err) => logger.error({ err }, "unhandled request error")));

  await listener?.start();
  await scheduler?.start();
  await areas.start();

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      await areas.stopIntake();
      await edge?.dispose(); // stops taking requests, drains in-flight ones and websockets
      if (server.listening) await new Promise<void>((r) => server.close(() => r()));
      await jobs.stop();
      await dispatcher?.stop();
      await areas.stop();
      await listener?.stop();
      await orm.close();
      await embedded?.stop();
    })();
    return stopping;
  };
  return { services, server, url: baseUrl, role, embedded: embedded !== null, areas, ready, startupDone: () => void (startupDone = true), stop };
}

function sqlState(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? `SQLSTATE ${code}` : err instanceof Error ? err.name : "unknown error";
}
