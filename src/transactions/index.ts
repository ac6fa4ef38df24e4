import type { Module, ModuleDefinition } from "../module.js";
import type { TransactionQuery } from "./transaction-query.js";
import type { TransactionStore } from "./transition.js";
import type { Idempotency } from "./idempotency.js";
import { Transaction } from "./transaction.entity.js";
import { TransactionEvent } from "./transaction-event.entity.js";
import { TransactionsResolver } from "./transactions.resolver.js";
import { OverviewResolver } from "./overview.resolver.js";
import { MismatchResolutions, MismatchResolver } from "./mismatch.resolver.js";
import { PaymentRechecks, type RecheckRegistry } from "./recheck.js";
import { RecheckResolver } from "./recheck.resolver.js";
import { TRANSACTIONS_MIGRATIONS } from "./migrations.js";
import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";

/**
 * The transaction tables and their read side over GraphQL. The write model (TransactionStore, the one
 * transition function) and the read model (TransactionQuery) are built by app.ts's core, because every
 * area writes through the one and reads through the other. So is the registry of the areas' rechecks, which each
 * area fills when it is created; the recheck itself (recheck.ts) is this module's.
 */
export interface TransactionsModuleDeps {
  store: TransactionStore;
  query: TransactionQuery;
  idempotency: Idempotency;
  clock: Clock;
  db: Db;
  logger: Logger;
  rechecks: RecheckRegistry;
}

export function createTransactionsModule(deps: TransactionsModuleDeps): Module {
  const rechecks = new PaymentRechecks({ ...deps, registry: deps.rechecks });
  return {
    resolvers: [
      new TransactionsResolver(deps.query, deps.store),
      new OverviewResolver(deps.query),
      new MismatchResolver(new MismatchResolutions(deps.store, deps.clock)),
      new RecheckResolver(rechecks),
    ],
    jobs: [
      // Idempotency-Key claims are kept for their 24 h window only.
      {
        name: "idempotency.prune",
        every: "10 minutes",
        lockLifetimeMs: 60_000,
        run: async () => void (await deps.idempotency.prune()),
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

export const transactionsModule: ModuleDefinition<TransactionsModuleDeps> = {
  name: "transactions",
  entities: [Transaction, TransactionEvent],
  resolvers: [TransactionsResolver, OverviewResolver, MismatchResolver, RecheckResolver],
  migrations: TRANSACTIONS_MIGRATIONS,
  create: createTransactionsModule,
};
