import type { Express } from "express";
import type { JobSpec } from "./jobs/scheduler.js";
import type { RestRoute } from "./rest/route-table.js";
import type { DocsExample } from "./rest/openapi.js";
import type { ExplorerPart } from "./graphql/sandbox.js";
import type { ClassOf } from "./graphql/container.js";
import type { KeyKindSpec } from "./auth/key-kinds.js";
import type { MigrationSpec } from "./db/orm.js";
import type { Config, EnvReader } from "./config.js";
import type { Clock } from "./clock.js";
import type { Db } from "./db/sql.js";
import type { Logger } from "./logger.js";
import type { UpstreamOrigins } from "./upstreams/origins.js";

export type { ClassOf, KeyKindSpec, MigrationSpec };

/**
 * What makes a module an upstream area (docs/architecture.md, "Adding an area"): everything the rest of the service
 * must know of it, declared here once. The GraphQL `Area` and `KeyKind` enums, the authenticator's x-auth-type
 * values, the admin API's key kinds, the rate limiter, the OpenAPI document and the expiry rules are all read from
 * the areas of the module list (app.ts); nothing below app.ts names an area.
 */
export interface AreaDefinition<S = unknown> {
  /** Its API keys: kind (also the area's name on transactions), x-auth-type, key tag, what a key is bound to. */
  key: KeyKindSpec;
  /**
   * How the dashboard names it (its transactions, its keys), and where the keys page lists what its keys are bound to:
   * an admin query answering `{ id merchantId name }`, and what one is called ("gateway configuration").
   */
  dashboard?: { label: string; target?: { query: string; what: string } };
  /** Its tag in the OpenAPI document (its REST paths carry it). */
  openApiTag: { name: string; description: string };
  /**
   * How its transactions expire, when not simply at their expiry: a grace during which only an answering check
   * expires one, and a late watch after it (transactions/transition.ts ExpiryPolicy). Given what its module's
   * `settings` read, since an area's expiry is its own setting.
   */
  expiry?(settings: S): { graceMs: number; lateWatchMs: number; lateCheckMs: number };
  /**
   * Its part of /docs (rest/openapi.ts DocsExample): in demo mode, the generate that issues the live values its
   * examples' placeholders take (which of its answer's values, which are new on every generate), and the field of
   * demo.json's `keys` holding the demo tenant's key of this kind; the document's words on its placeholders.
   */
  docsExample?: DocsExample;
  /**
   * Its part of the GraphQL explorers' example document (/graphql's Sandbox, /graphiql: graphql/sandbox.ts): the
   * example operations, when it is the first area of the module list to declare them, and fields it has followed.
   */
  explorer?: ExplorerPart;
  /**
   * Its own data on a transaction (docs/decisions/0208-areas-own-their-data.md): the upstream's identifier in the
   * shared `upstream_ref` column, everything else under keys of its own in the `upstream` JSON, and the fields it
   * shows of them. The core names none of them: it places what `present` answers where the fields say.
   */
  data?: AreaData;
}

/** A transaction row as an area's `present` reads it (the core's TxRecord has all of it). */
export interface AreaRow {
  id: string;
  area: string;
  status: string;
  /** The upstream's identifier of the payment (the area's own: an order id, a QR's md5, a payment link's client id). */
  upstreamRef: string | null;
  /** The area's part of the row: keys only the area writes and reads (besides the core's late, mismatch, failure). */
  upstream: Record<string, unknown>;
}

/** One value an area shows of its transactions: a field of the GraphQL `Transaction` type, and where else it shows. */
export interface AreaField {
  name: string;
  /** Its GraphQL type (type-graphql's: `() => String`, `() => Boolean`, an object type class). */
  type: () => unknown;
  nullable?: boolean;
  description?: string;
  /** Its value on a transaction of another area (`null`, `false`): the field is on every transaction. */
  none: null | boolean;
  /**
   * A key of the event snapshot (webhook bodies, subscriptions' `TransactionSnapshot`) when the transaction has it,
   * placed after the key `after`; `select`: its sub-selection, for an object type (`{ code message }`).
   */
  snapshot?: { after: string; select?: string };
  /**
   * Shown by the checkout view (a client token reads it), after the key `after`. `link`: a URL the public page may
   * open, shown only if it is one (checkout's rule: `http`, an http(s) URL; `app`, that or a banking app's scheme).
   */
  checkout?: { after: string; link?: "http" | "app" };
  /** A column of the CSV export, named `column`, after the column `after`: the value's text, "" when none. */
  csv?: { column: string; after: string };
  /**
   * Shown by the dashboard (its config.json): a row of a transaction's details named `label`, as text, as `code` or
   * as a `link`; `reference`: the transactions table's reference of its area's rows (`short`: the label and the
   * first 10 characters, for a hash). An object's value shows its sub-selection's values (`snapshot.select`).
   */
  dashboard?: { label: string; show?: "code" | "link"; reference?: "whole" | "short" };
}

/**
 * A column of the CSV export that is no field of the GraphQL types (AreaData.csv): named `column`, after the column
 * `after`; `cell`, its text for one of the area's transactions ("" when none).
 */
export interface AreaColumn {
  column: string;
  after: string;
  cell(tx: AreaRow): string;
}

/** What an area keeps and shows of its transactions (AreaDefinition.data). */
export interface AreaData {
  /**
   * The fields it shows, in order. Two areas may show one field: their declarations must agree (type, `nullable`,
   * `none`, where it shows; a description given by one or alike), else the app is not built. It stands where the
   * first area in module order lists it.
   */
  fields: AreaField[];
  /** Its fields' values for one of its transactions, read from the row already read (never a query). */
  present(tx: AreaRow): Record<string, unknown>;
  /**
   * What `upstream_ref` is to its transactions: whether the transactions search matches it (by prefix, as typed or
   * lowercased), and `field`, the field that shows it (how the search's description names it).
   */
  ref?: { search?: "as-typed" | "lowercased"; field?: string };
  /**
   * What the payer's bank or the gateway knows a paid transaction by (the checkout view's `reference`), if the
   * area knows one: never meta, the payer's account or the service's own ids.
   */
  reference?(tx: AreaRow): string | null;
  /** When a paid transaction was paid by the upstream's own clock, where it reported one (the checkout's `paidAt`). */
  paidAt?(tx: AreaRow): Date | null;
  /** The event snapshot's `payment`: what the upstream reported about the payment (payer, hash, time); undefined: none. */
  payment?(tx: AreaRow): unknown;
  /** CSV columns besides its fields' (the network's payment hash), placed as a field's `csv` is. */
  csv?: AreaColumn[];
}

/**
 * A feature module (docs/architecture.md). What it is made of is data, known before anything runs: the
 * ORM needs the entities before the database is open, and `npm run schema` builds the schema from the
 * resolver classes without a database. What it does comes from `create(deps)`, where `deps` is the small
 * typed object the module declares, never a bag of everything.
 */
export interface ModuleDefinition<Deps, M extends Module = Module, S = undefined> {
  name: string;
  entities?: ClassOf[];
  resolvers?: ClassOf[];
  /**
   * Resolver classes this module makes from the module list's areas (the transactions module's: the areas' fields on
   * its types). With `resolvers`, what the schema is built from; `create` returns an instance of each, as of those.
   */
  areaResolvers?(areas: readonly AreaDefinition[]): ClassOf[];
  /** REST paths of the contract this module answers (each one GraphQL operation, rest/route-table.ts). */
  routes?: RestRoute[];
  /** Set for an upstream area: what the rest of the service derives from it. */
  area?: AreaDefinition<S>;
  /**
   * HTTP path prefixes charged to the caller's rate limit (its REST paths, and any other per-credential path);
   * a prefix no module declares is not throttled.
   */
  rateLimited?: string[];
  /**
   * Its own migrations, run after the central ones (src/db/migrations) in module order. Names are global and
   * permanent: a migration is never renamed or edited once shipped; prefix them with the module's name.
   */
  migrations?: MigrationSpec[];
  /**
   * Its own settings, read from the environment when the app is created, before anything opens (a bad value stops
   * the start with the variable's name): a module's configuration slice lives with the module, `src/config.ts` need
   * not know it. `config` is the shared configuration, for defaults and rules that depend on it (simulators on).
   */
  settings?(env: EnvReader, config: Config): S;
  /** `settings`: what `settings(env, config)` read, when the module has any. */
  create(deps: Deps, settings: S): M;
  /**
   * Demo mode's part of an area: a dynamic import of the area's own `demo.ts` (`() => import("./demo.js")`), the one
   * file of its folder that may import its simulator. Loaded only in demo mode (src/demo/), so a production
   * process never loads a simulator.
   */
  demo?(): Promise<AreaDemo<S, M>>;
}

/**
 * What app.ts gives every area's module, besides what each one asks for in its own deps (qr/index.ts QrModuleDeps and
 * the others extend this): the clock, the database and the logger.
 */
export interface AreaModuleDeps {
  clock: Clock;
  db: Db;
  logger: Logger;
}

/** What an area's demo part may use (the demo module's deps), besides the area's own settings. */
export interface DemoPartDeps {
  clock: Clock;
  logger: Logger;
  db: Db;
  upstreamOrigins: Pick<UpstreamOrigins, "set">;
}

/** An area's stand-in upstream in demo mode (and in tests): mounted on the service's port, started and stopped with it. */
export interface DemoPart {
  mount(app: Express): void;
  /** The dashboard's buttons for a transaction of the area (docs/simulator-controls.md). */
  controls: SimulatorControl[];
  /** The simulator itself, for tests to drive (the demo module's `simulators`, by the area's kind). */
  simulator?: unknown;
  start?(): Promise<void>;
  stop?(): Promise<void>;
}

/**
 * An area's part of the demo tenant (src/demo/seed.ts): its key, and what the key is bound to, created through the
 * area's running module `M`.
 */
export interface DemoSeed<M extends Module = Module> {
  label: string;
  /** Its field in demo.json's `keys` (documented: qr, gateway, gatewayLink) and in its `ids`. */
  keyField: string;
  idField: string;
  /** How the banner names its key. */
  bannerLabel: string;
  /** Its entry in demo.json's `simulators`. */
  simulator: { name: string; url(base: string): string };
  /** The banner's hint of how to pay on its simulator (`/sim/network/pay {"md5"}`). */
  payHint?: string;
  /** The banner's first thing to try, given the base URL and the demo key of this area. */
  tryIt?(base: string, key: string): string[];
  /** Creates what its key is bound to: the key input's target field, and ids a restart needs. */
  target?(
    module: M,
    merchantId: string,
    base: string,
  ): Promise<{ input: Record<string, string>; ids: Record<string, string> }>;
  /** On a restart with the same tenant: point what it created at this process (the port may differ). */
  refresh?(module: M, ids: Record<string, string>, base: string): Promise<void>;
}

/** An area's `demo.ts`: its simulator (a demo part, given the area's own settings) and its demo seed. */
export interface AreaDemo<S = unknown, M extends Module = Module> {
  part?(deps: DemoPartDeps, settings: S): DemoPart;
  seed?: DemoSeed<M>;
}

/** What a module may read of a committed event (the events module's StoredEvent has all of it). */
export interface CommittedEvent {
  id: string;
  transactionId: string;
  area: string;
  type: string;
  status: string;
  /** `{ transaction, meta }`: the webhook body's `data`. */
  payload: unknown;
  /** Delivery rows written with the event; known only in the process that committed it. */
  deliveries?: number;
}

/** One demo button of the transaction page: POST /sim/<path> with a body built from the transaction. */
export interface SimulatorControl {
  label: string;
  path: string;
  /** Request field → the transaction's field whose value it takes. */
  fields: Record<string, string>;
  fixed?: Record<string, string>;
}

/** What a running module contributes; app.ts assembles these and lists modules nowhere else. */
export interface Module {
  /** Resolver instances, each for its class in `resolvers` (type-graphql's container hands them out). */
  resolvers?: object[];
  /** Jobs it runs (defined only in processes that run jobs). */
  jobs?: JobSpec[];
  /** HTTP handlers of its own (simulators, the webhook inbox), mounted before the API's. */
  mount?(app: Express): void;
  /** Every committed event, in this process (the events module's bus). */
  onEvent?(event: CommittedEvent): void;
  start?(): Promise<void>;
  /**
   * Shutdown, once this process takes no more jobs and before its job database closes: give running work
   * to other workers now rather than when its job locks expire.
   */
  handOver?(): Promise<void>;
  stop?(): Promise<void>;
  /**
   * Demo mode: what the dashboard's buttons may do to a transaction, by area (a simulator control under /sim/ and its
   * body: request field → the transaction's field, plus fixed values). The demo module declares its parts' controls.
   */
  simulatorControls?: Record<string, SimulatorControl[]>;
  /**
   * Services this module builds in `create` that other modules are given (the transactions module's store and read
   * model, the admin module's AdminService): app.ts adds them to what the modules after it in the list receive.
   */
  provides?: object;
  /** What /readyz should say about this module (merged into `details`); informational, never failing it. */
  readiness?(): Record<string, unknown>;
}
