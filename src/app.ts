import "reflect-metadata";
import type { Server } from "node:http";
import { EnvReader, type Config } from "./config.js";
import { systemClock, type Clock } from "./clock.js";
import { createLogger, type Logger } from "./logger.js";
import { startEmbeddedDb, type EmbeddedDb } from "./db/embedded.js";
import { lockDataDir, ownsDataDir, type DataDirLock } from "./db/data-dir-lock.js";
import { createOrm, migrate, pendingMigrations, underSchemaLock, type Orm } from "./db/orm.js";
import { Db } from "./db/sql.js";
import type { ExpiryPolicy } from "./transactions/transition.js";
import type { OutboxFanout } from "./transactions/outbox-sql.js";
import { AREA_ENUM } from "./transactions/transaction.types.js";
import { KEY_KIND_ENUM } from "./admin/admin.types.js";
import { SecretBox } from "./auth/secret-box.js";
import { Invalidations } from "./cache/invalidation.js";
import { Authenticator } from "./auth/keys.js";
import { KeyKinds } from "./auth/key-kinds.js";
import { Metrics } from "./ops/metrics.js";
import { buildAppSchema, printAppSchema } from "./graphql/schema.js";
import { AreaViews } from "./transactions/area-views.js";
import { areaFieldResolvers } from "./transactions/area-fields.js";
import type { EnumValues } from "./graphql/listed-enums.js";
import { ResolverContainer } from "./graphql/container.js";
import type { GraphQLEdge } from "./graphql/edge.js";
import { Scheduler } from "./jobs/scheduler.js";
import { loadOrCreateSecrets } from "./auth/stored-secrets.js";
import { StartupError } from "./errors.js";
import { checkDataDir, databaseStartupError } from "./startup.js";
import { dashboardData, type DashboardArea, type DashboardOptions } from "./dashboard/index.js";
import { openApiDocument } from "./rest/openapi.js";
import { UpstreamOrigins } from "./upstreams/origins.js";
import { EVENT_DESCRIPTIONS, EVENT_TYPES } from "./transactions/transaction-event.entity.js";
import { adminUrlOf, closeHttp, closeListeners, openHttp, type Http } from "./http/listeners.js";
import { mountApi, type ApiDeps } from "./http/api.js";
import type { AreaDefinition, Module, ModuleDefinition } from "./module.js";
import { opsModule } from "./ops/index.js";
import { adminModule, type AdminServices } from "./admin/index.js";
import { transactionsModule, type TransactionServices } from "./transactions/index.js";
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
  // Before the modules given its services (the store, the read model): events and every area.
  transactionsModule,
  eventsModule,
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

/**
 * The shared mechanisms, built once per process before the modules (buildCore): what no one module owns. The event
 * bus, the metrics registry and the authenticator are here because the scheduler, the HTTP edge and the store need
 * them before any module exists (docs/decisions/0220-modules-build-their-services.md).
 */
export interface SharedCore {
  config: Config;
  clock: Clock;
  logger: Logger;
  orm: Orm;
  db: Db;
  bus: EventBus;
  box: SecretBox;
  invalidations: Invalidations;
  auth: Authenticator;
  metrics: Metrics;
  /** The kinds of API key of this app's areas. */
  kinds: KeyKinds;
  /** The webhooks module's delivery rows, written in each transition's statement (a port the store takes). */
  outboxFanout: OutboxFanout;
  /** The areas' expiry policies, each from its module's settings (a port the store takes). */
  expiryPolicies: Partial<Record<string, ExpiryPolicy>>;
  /** What the areas keep and show of their transactions (AreaDefinition.data; the store places it). */
  areaViews: AreaViews;
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

/** What modules build in their own `create` and provide to the modules after them in the list (`Module.provides`). */
export interface Services extends TransactionServices, AdminServices {}

/** Which module provides each service: a module asking for one before its provider was created is told so. */
const PROVIDERS: Record<keyof Services, string> = {
  store: transactionsModule.name,
  query: transactionsModule.name,
  idempotency: transactionsModule.name,
  rechecks: transactionsModule.name,
  admin: adminModule.name,
};

/**
 * What every module may be given: the shared core and the services the modules provide. `createApp` hands each
 * module's `create` this, its services filled in module order.
 */
export type Core = SharedCore & Services;

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
 * The composition root (docs/architecture.md): `openStorage` (the database, migrations and the job scheduler),
 * `buildCore` (the shared mechanisms), the HTTP edge's listeners (`openHttp`, src/http/), `createModules` (each
 * module in list order, given the core and the services the modules before it provide), what the modules serve
 * handed to the edge (`mountApi` with `apiOf`), the listeners' last handlers; then the modules start, and `stopApp`
 * ends it all in reverse. The edge's policy is src/http/'s (docs/decisions/0219-the-http-edge-decides.md).
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
  let edge: GraphQLEdge | null = null;
  try {
    const { core, created } = createModules(defs, { ...shared, baseUrl: http.baseUrl }, settings);
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
    for (const m of modules) m.mount?.(http.app);
    if (role !== "worker") edge = await mountApi(http, await apiOf(core, defs, modules));
    await closeHttp(http, config, logger);
    for (const m of modules) await m.start?.();
    await scheduler?.start();
    let stopping: Promise<void> | null = null;
    const running = edge;
    return {
      core,
      module: <M extends Module>(definition: ModuleDefinition<never, M, unknown>): M => created.get(definition) as M,
      server: http.server,
      adminUrl: adminUrlOf(http),
      url: http.baseUrl,
      role,
      embedded: storage.embedded !== null,
      ready,
      startupDone: () => void (startupDone = true),
      stop: () => (stopping ??= stopApp(http, running, storage, modules)),
    };
  } catch (err) {
    // A start that fails half-way leaves nothing open: listeners, database and the DATA_DIR lock are given back,
    // so the same process may start again (a test, an embedder).
    await edge?.dispose().catch(() => undefined);
    await closeListeners(http, true);
    await storage.close();
    throw err;
  }
}

/**
 * The modules, created in list order: each is given the shared core and the services the modules before it
 * provided. A module asking for a service whose provider comes later (or is not listed) is stopped with its name.
 */
function createModules(
  defs: ModuleList,
  shared: SharedCore,
  settings: Map<unknown, unknown>,
): { core: Core; created: Map<unknown, Module> } {
  const provided: Partial<Services> = {};
  const created = new Map<unknown, Module>();
  for (const def of defs) {
    const missing = Object.create(null) as object;
    for (const [key, provider] of Object.entries(PROVIDERS))
      if (!(key in provided))
        Object.defineProperty(missing, key, {
          get() {
            throw new Error(
              `Module "${def.name}" needs ${key}, which the ${provider} module provides: list ${provider} before it`,
            );
          },
        });
    const deps = Object.assign(Object.create(missing) as Core, shared, provided);
    const m = def.create(deps, settings.get(def));
    Object.assign(provided, m.provides);
    created.set(def, m);
  }
  return { core: { ...shared, ...provided } as Core, created };
}

/** What the HTTP edge's API serves, from the module list (src/http/api.ts decides where and in which order). */
async function apiOf(core: Core, defs: ModuleList, modules: Module[]): Promise<ApiDeps> {
  const areas = areasOf(defs);
  return {
    ...core,
    schema: await schemaOf(defs),
    container: new ResolverContainer(resolversOf(defs), [
      ...modules.flatMap((m) => m.resolvers ?? []),
      // The areas' fields on the transaction types: made from their declarations, one instance per class.
      ...areaFieldResolvers(areaViewsOf(defs)).map((cls) => new cls()),
    ]),
    routes: routesOf(defs),
    rateLimited: defs.flatMap((d) => d.rateLimited ?? []),
    openApi: (schema) => openApiDocument(schema, routesOf(defs), WEBHOOK_EVENTS, API_VERSION, areas),
    areas,
    dashboard: {
      areas: dashboardAreas(areas),
      controls: Object.assign({}, ...modules.map((m) => m.simulatorControls ?? {})) as DashboardOptions["controls"],
    },
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
): Omit<SharedCore, "baseUrl"> {
  const { clock } = p;
  const { db, orm, jobs } = storage;
  // An area's expiry rules are its own settings: each is given what its module's `settings` read.
  const expiryPolicies = Object.fromEntries(
    p.defs.flatMap((def) => {
      const area = def.area;
      return area?.expiry === undefined ? [] : [[area.key.kind, area.expiry(p.settings.get(def))]];
    }),
  );
  const box = new SecretBox(storage.secrets.secretKey);
  const invalidations = new Invalidations();
  const kinds = keyKindsOf(p.defs);
  return {
    config,
    clock,
    logger: p.logger,
    orm,
    db,
    bus: new EventBus(),
    box,
    invalidations,
    auth: new Authenticator(db, box, clock, storage.secrets.adminToken, kinds, invalidations),
    metrics: storage.metrics,
    kinds,
    outboxFanout: WEBHOOK_OUTBOX,
    expiryPolicies,
    areaViews: areaViewsOf(p.defs),
    upstreamOrigins: new UpstreamOrigins(),
    enqueue: (name, data) => jobs.now(name, data),
    delivers: p.delivers,
    listenUrl: storage.embedded === null ? storage.url : null,
  };
}

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

/** The areas as the dashboard's pages see them (its config.json). */
function dashboardAreas(areas: AreaDefinition[]): DashboardArea[] {
  return areas.map(({ key, dashboard, data }) => ({
    kind: key.kind,
    label: dashboard?.label ?? key.kind,
    authType: key.authType,
    target:
      key.target === undefined || dashboard?.target === undefined
        ? null
        : { field: key.target.field, ...dashboard.target },
    ...dashboardData(data),
  }));
}

/**
 * Shutdown: stop taking requests (draining in-flight ones and websockets), stop taking jobs, let the modules hand
 * their running work over, stop the jobs, the modules (in reverse), the database.
 */
async function stopApp(http: Http, edge: GraphQLEdge | null, storage: Storage, modules: Module[]): Promise<void> {
  await edge?.dispose();
  await closeListeners(http, false);
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

function sqlState(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? `SQLSTATE ${code}` : err instanceof Error ? err.name : "unknown error";
}
