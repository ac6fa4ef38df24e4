import type { AreaDefinition, Module, ModuleDefinition } from "../module.js";
import { TransactionQuery } from "./transaction-query.js";
import { TransactionStore, type ExpiryPolicy } from "./transition.js";
import { AreaViews } from "./area-views.js";
import { areaFieldResolvers } from "./area-fields.js";
import { Idempotency } from "./idempotency.js";
import type { EventSink } from "./stored-event.js";
import type { OutboxFanout } from "./outbox-sql.js";
import { Transaction } from "./transaction.entity.js";
import { TransactionEvent } from "./transaction-event.entity.js";
import { TransactionsResolver } from "./transactions.resolver.js";
import { OverviewResolver } from "./overview.resolver.js";
import { MismatchResolutions, MismatchResolver } from "./mismatch.resolver.js";
import { PaymentRechecks, RecheckRegistry } from "./recheck.js";
import { RecheckResolver } from "./recheck.resolver.js";
import { TRANSACTIONS_MIGRATIONS } from "./migrations.js";
import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";

/** What the transactions module builds for the modules after it (app.ts hands these on; decision 0220). */
export interface TransactionServices {
  /** The write model: create and the one transition function. */
  store: TransactionStore;
  /** The read model: cursor pages and single transactions, scoped by principal. */
  query: TransactionQuery;
  idempotency: Idempotency;
  /** Each area registers what asking its upstream again about one payment is (recheck.ts). */
  rechecks: RecheckRegistry;
}

/**
 * What the transactions module is built from: shared mechanisms, and the ports app.ts plugs in from the module list
 * (the events module's bus, the webhooks module's delivery rows, the areas' expiry policies).
 */
export interface TransactionsModuleDeps {
  clock: Clock;
  db: Db;
  logger: Logger;
  bus: EventSink;
  outboxFanout: OutboxFanout | null;
  expiryPolicies: Partial<Record<string, ExpiryPolicy>>;
  areaViews: AreaViews;
}

export interface TransactionsModule extends Module {
  provides: TransactionServices;
}

/**
 * The transaction tables, their write model (TransactionStore, the one transition function), their read model
 * (TransactionQuery), idempotency and the registry of the areas' rechecks, with their read side over GraphQL. Every
 * area writes through the store and reads through the query: the module provides them to the modules after it.
 */
export function createTransactionsModule(deps: TransactionsModuleDeps): TransactionsModule {
  const store = new TransactionStore(
    deps.db,
    deps.bus,
    deps.clock,
    deps.outboxFanout,
    deps.expiryPolicies,
    deps.areaViews,
  );
  const query = new TransactionQuery(deps.db, store, deps.clock);
  const idempotency = new Idempotency(deps.db, deps.clock);
  const registry = new RecheckRegistry();
  const rechecks = new PaymentRechecks({ ...deps, store, query, registry });
  return {
    provides: { store, query, idempotency, rechecks: registry },
    resolvers: [
      new TransactionsResolver(query),
      new OverviewResolver(query),
      new MismatchResolver(new MismatchResolutions(store, deps.clock)),
      new RecheckResolver(rechecks),
      // The areas' fields on the transaction types: made from their declarations, one instance per class.
      ...areaFieldResolvers(deps.areaViews).map((cls) => new cls()),
    ],
    jobs: [
      // Idempotency-Key claims are kept for their 24 h window only.
      {
        name: "idempotency.prune",
        every: "10 minutes",
        lockLifetimeMs: 60_000,
        run: async () => void (await idempotency.prune()),
      },
      // A recheck's row gates the next one for seconds; a day later it gates nothing.
      {
        name: "recheck.prune",
        every: "1 hour",
        lockLifetimeMs: 60_000,
        run: async () => void (await rechecks.gate.prune()),
      },
    ],
  };
}

/** What the areas of a module list keep and show of their transactions (AreaDefinition.data; the store places it). */
export const areaViewsOf = (areas: readonly AreaDefinition[]): AreaViews =>
  new AreaViews(areas.map((a) => ({ kind: a.key.kind, data: a.data })));

export const transactionsModule: ModuleDefinition<TransactionsModuleDeps, TransactionsModule> = {
  name: "transactions",
  entities: [Transaction, TransactionEvent],
  resolvers: [TransactionsResolver, OverviewResolver, MismatchResolver, RecheckResolver],
  areaResolvers: (areas) => areaFieldResolvers(areaViewsOf(areas)),
  migrations: TRANSACTIONS_MIGRATIONS,
  create: createTransactionsModule,
};
