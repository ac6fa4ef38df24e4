import type { Express } from "express";
import type { JobSpec } from "./jobs/scheduler.js";
import type { RestRoute } from "./rest/route-table.js";
import type { ClassOf } from "./graphql/container.js";

export type { ClassOf };

/**
 * A feature module (docs/architecture.md). What it is made of is data, known before anything runs: the
 * ORM needs the entities before the database is open, and `npm run schema` builds the schema from the
 * resolver classes without a database. What it does comes from `create(deps)`, where `deps` is the small
 * typed object the module declares, never a bag of everything.
 */
export interface ModuleDefinition<Deps, M extends Module = Module> {
  name: string;
  entities?: ClassOf[];
  resolvers?: ClassOf[];
  /** REST paths of the contract this module answers (each one GraphQL operation, rest/route-table.ts). */
  routes?: RestRoute[];
  create(deps: Deps): M;
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
  /** What /readyz should say about this module (merged into `details`); informational, never failing it. */
  readiness?(): Record<string, unknown>;
}
