import type { Module, ModuleDefinition } from "../module.js";
import type { TransactionQuery } from "./transaction-query.js";
import type { TransactionStore } from "./transition.js";
import type { Idempotency } from "./idempotency.js";
import { Transaction } from "./transaction.entity.js";
import { TransactionEvent } from "./transaction-event.entity.js";
import { TransactionsResolver } from "./transactions.resolver.js";
import { OverviewResolver } from "./overview.resolver.js";
import { MismatchResolutions, MismatchResolver } from "./mismatch.resolver.js";
import type { Clock } from "../clock.js";

/**
 * The transaction tables and their read side over GraphQL. The write model (TransactionStore, the one
 * transition function) and the read model (TransactionQuery) are built by app.ts's core, because every
 * area writes through the one and reads through the other.
 */
export interface TransactionsModuleDeps {
  store: TransactionStore;
  query: TransactionQuery;
  idempotency: Idempotency;
  clock: Clock;
}

export function createTransactionsModule(deps: TransactionsModuleDeps): Module {
  return {
    resolvers: [
      new TransactionsResolver(deps.query, deps.store),
      new OverviewResolver(deps.query),
      new MismatchResolver(new MismatchResolutions(deps.store, deps.clock)),
    ],
    // Idempotency-Key claims are kept for their 24 h window only.
    jobs: [
      {
        name: "idempotency.prune",
        every: "10 minutes",
        lockLifetimeMs: 60_000,
        run: async () => void (await deps.idempotency.prune()),
      },
    ],
  };
}

export const transactionsModule: ModuleDefinition<TransactionsModuleDeps> = {
  name: "transactions",
  entities: [Transaction, TransactionEvent],
  resolvers: [TransactionsResolver, OverviewResolver, MismatchResolver],
  create: createTransactionsModule,
};
