import type { Logger } from "../logger.js";
import type { Invalidations } from "../cache/invalidation.js";
import type { TransactionStore } from "../transactions/transition.js";
import type { TransactionQuery } from "../transactions/transaction-query.js";
import type { Module, ModuleDefinition } from "../module.js";
import type { EventBus } from "./event-bus.js";
import { EventListener } from "./event-listener.js";
import { LiveEvents } from "./live-events.js";
import { ReplayBudget } from "./replay-budget.js";
import { SubscriptionsResolver } from "./subscriptions.resolver.js";

export { EventBus } from "./event-bus.js";

export interface EventsModuleDeps {
  /** The database to LISTEN on; null on the embedded database, where NOTIFY does not cross connections. */
  listenUrl: string | null;
  bus: EventBus;
  store: TransactionStore;
  query: TransactionQuery;
  logger: Logger;
  invalidations: Invalidations;
  config: { ws: { maxReplay: number; replayEventsPerMinute: number } };
}

/**
 * The fan-out of committed events: the in-process bus (app.ts hands every event to each module's
 * onEvent), the LISTEN/NOTIFY listener that brings other processes' events onto it, and the live
 * subscriptions of GraphQL clients.
 */
export function createEventsModule(deps: EventsModuleDeps): Module {
  const { maxReplay, replayEventsPerMinute } = deps.config.ws;
  const budget = replayEventsPerMinute > 0 ? new ReplayBudget(replayEventsPerMinute, maxReplay) : null;
  const live = new LiveEvents(deps.store, deps.bus, deps.query, maxReplay, budget);
  const listener =
    deps.listenUrl === null
      ? null
      : new EventListener(deps.listenUrl, deps.store, deps.bus, deps.logger, deps.invalidations);
  return {
    resolvers: [new SubscriptionsResolver(live)],
    async start() {
      await listener?.start();
    },
    async stop() {
      await listener?.stop();
    },
  };
}

export const eventsModule: ModuleDefinition<EventsModuleDeps> = {
  name: "events",
  resolvers: [SubscriptionsResolver],
  create: createEventsModule,
};
