import type { Module, ModuleDefinition } from "../module.js";
import type { TransactionQuery } from "./transaction-query.js";
import type { TransactionStore } from "./transition.js";
import { Transaction } from "./transaction.entity.js";
import { TransactionEvent } from "./transaction-event.entity.js";
import { TransactionsResolver } from "./transactions.resolver.js";

/**
 * The transaction tables and their read side over GraphQL. The write model (TransactionStore, the one
 * transition function) and the read model (TransactionQuery) are built by app.ts's core, because every
 * area writes through the one and reads through the other.
 */
export function createTransactionsModule(deps: { store: TransactionStore; query: TransactionQuery }): Module {
  return { resolvers: [new TransactionsResolver(deps.query, deps.store)] };
}

export const transactionsModule: ModuleDefinition<{ store: TransactionStore; query: TransactionQuery }> = {
  name: "transactions",
  entities: [Transaction, TransactionEvent],
  resolvers: [TransactionsResolver],
  create: createTransactionsModule,
};
