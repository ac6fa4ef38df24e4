import "reflect-metadata";
import type { Server } from "node:http";
import { EnvReader, type Config } from "./config.js";
import { systemClock, type Clock } from "./clock.js";
import { createLogger, type Logger } from "./logger.js";
import { openStorage as openDbStorage, type Storage as DbStorage } from "./db/storage.js";
import type { Orm } from "./db/orm.js";
import { Db } from "./db/sql.js";
import type { ExpiryPolicy } from "./transactions/transition.js";
import type { OutboxFanout } from "./transactions/outbox-sql.js";
import { AREA_ENUM } from "./transactions/transaction.types.js";
import { KEY_KIND_ENUM, KEY_TARGET_FIELDS } from "./admin/admin.types.js";
import { SecretBox } from "./auth/secret-box.js";
import { Invalidations } from "./cache/invalidation.js";
import { Authenticator } from "./auth/keys.js";
import { KeyKinds } from "./auth/key-kinds.js";
import { Metrics } from "./ops/metrics.js";
import { buildAppSchema, printAppSchema } from "./graphql/schema.js";
import { AreaViews } from "./transactions/area-views.js";
import type { ListedValues } from "./graphql/listed-enums.js";
import { ResolverContainer } from "./graphql/container.js";
import type { GraphQLEdge } from "./graphql/edge.js";
import { Scheduler } from "./jobs/scheduler.js";
import { loadOrCreateSecrets } from "./auth/stored-secrets.js";
import { checkDataDir, databaseStartupError } from "./startup.js";
import { dashboardData, type DashboardArea, type DashboardOptions } from "./dashboard/index.js";
import { openApiDocument } from "./rest/openapi.js";
import { UpstreamOrigins } from "./upstreams/origins.js";
import { EVENT_DESCRIPTIONS, EVENT_TYPES } from "./transactions/transaction-event.entity.js";
import { adminUrlOf, closeHttp, closeListeners, openHttp, type Http } from "./http/listeners.js";
import { mountApi, type ApiDeps } from "./http/api.js";
import { mountReadiness, readiness, type Readiness } from "./http/readiness.js";
import type { AreaDefinition, Module, ModuleDefinition } from "./module.js";
import { opsModule } from "./ops/index.js";
import { adminModule, type AdminServices } from "./admin/index.js";
import { areaViewsOf as areaViewsOfAreas, transactionsModule, type TransactionServices } from "./transactions/index.js";
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
export const areaViewsOf = (modules: ModuleList): AreaViews => areaViewsOfAreas(areasOf(modules));
/** The modules' resolver classes: the ones they list, and the ones they make from the list's areas. */
const resolversOf = (modules: ModuleList) =>
  modules.flatMap((m) => [...(m.resolvers ?? []), ...(m.areaResolvers?.(areasOf(modules)) ?? [])]);

/** What the ORM maps: every module's tables. */
export const ENTITIES = entitiesOf(MODULES);
/** The migrations the modules of MODULES bring. */
export const MODULE_MIGRATIONS = migrationsOf(MODULES);
/** The eight REST paths of the contract, from the area modules. */
export const ROUTES = routesOf(MODULES);
const WEBHOOK_EVENTS = EVENT_TYPES.map((type) => ({ type, description: EVENT_DESCRIPTIONS[type] }));
/** The REST contract's version in the OpenAPI document (paths carry none: the contract gives none). */
const API_VERSION = "1.0.0";

/**
 * What lists the areas in the schema, with the values of a module list: the `Area` and `KeyKind` enums, and the
 * fields naming what a key is bound to (`ApiKey`, `ApiKeyInput`).
 */
function listedInSchema(modules: ModuleList): ListedValues[] {
  const keys = areasOf(modules).map((a) => a.key);
  const kinds = keys.map((k) => k.kind);
  const where = keys
    .map((k, i) => `${k.kind} → ${k.paths.replace(/\/\*$/, "")} (${i === 0 ? "x-auth-type " : ""}${k.authType})`)
    .join("; ");
  const targets = [...new Set(keys.flatMap((k) => (k.target === undefined ? [] : [k.target.field])))];
  return [
    { listed: AREA_ENUM, values: kinds },
    { listed: KEY_KIND_ENUM, values: kinds, description: where },
    ...KEY_TARGET_FIELDS.map((listed) => ({ listed, values: targets })),
  ];
}

/** The schema of a module list (the GraphQL edge's, and what `npm run schema` prints). */
const schemaOf = (modules: ModuleList) => buildAppSchema(resolversOf(modules), listedInSchema(modules));

/** The OpenAPI document of the REST shim, built with no database (tests check every REST answer against it). */
export async function restOpenApi(modules: ModuleList = MODULES): Promise<Record<string, unknown>> {
  return openApiDocument(await schemaOf(modules), routesOf(modules), WEBHOOK_EVENTS, API_VERSION, areasOf(modules));
}

/** What `npm run schema` writes to schema.graphql and the drift test compares. */
export function schemaSdl(modules: ModuleList = MODULES): Promise<string> {
  return printAppSchema(resolversOf(modules), listedInSchema(modules));
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
  ready(): Promise<Readiness>;
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
 * The composition root (docs/architecture.md): `openStorage` (src/db/storage.ts: the database, migrations and the
 * job scheduler), `buildCore` (the shared mechanisms), the HTTP edge's listeners (`openHttp`, src/http/),
 * `createModules` (each module in list order, given the core and the services the modules before it provide),
 * /readyz and what the modules serve handed to the edge (`mountReadiness`, `mountApi` with `apiOf`), the listeners'
 * last handlers; then the modules start, and `stopApp` ends it all in reverse. The edge's policy is src/http/'s
 * (docs/decisions/0219-the-http-edge-decides.md, 0231).
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
    const ready = readiness({ db: storage.db, orm: storage.orm, scheduler, modules, startupDone: () => startupDone });
    mountReadiness(http.app, ready);
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
    container: new ResolverContainer(
      resolversOf(defs),
      modules.flatMap((m) => m.resolvers ?? []),
    ),
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

/** The database, its migrations, the stored secrets and the job scheduler, as src/db/storage.ts opens them. */
type Storage = DbStorage<{ adminToken: string; secretKey: string }, { jobs: Scheduler; metrics: Metrics }>;

/**
 * Storage for this module list: db/ opens it (a lower layer), given what the layers above it bring — the
 * start-up checks, the stored secrets, the job scheduler and the metrics registry it reports into.
 */
function openStorage(config: Config, role: Role, logger: Logger, defs: ModuleList): Promise<Storage> {
  return openDbStorage(config, role, logger, {
    entities: entitiesOf(defs),
    migrations: migrationsOf(defs),
    checkDataDir,
    startupError: databaseStartupError,
    secrets: () => loadOrCreateSecrets(config.dataDir, { adminToken: config.adminToken, secretKey: config.secretKey }),
    async open(url, db, poolSize) {
      const metrics = new Metrics(db);
      const jobs = new Scheduler(url, { logger, metrics, poolSize });
      await jobs.ready();
      return { jobs, metrics };
    },
  });
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
