import type { Module, ModuleDefinition } from "../module.js";
import type { Logger } from "../logger.js";
import { logStateChange } from "../logs/activity.js";
import type { Metrics } from "./metrics.js";
import { HealthResolver } from "./health.resolver.js";

export interface OpsModuleDeps {
  metrics: Metrics;
  logger: Logger;
}

/** Who-am-I for clients, the transitions counter of /metrics, and one log line per state change. */
export function createOpsModule(deps: OpsModuleDeps): Module {
  return {
    resolvers: [new HealthResolver()],
    onEvent: (e) => {
      deps.metrics.transitions.inc({ area: e.area, type: e.type });
      // Only the process that committed it knows the event's deliveries (other processes hear it by NOTIFY):
      // so each change is one line in the whole deployment, not one per api process.
      if (e.deliveries !== undefined) logStateChange(deps.logger, e);
    },
  };
}

export const opsModule: ModuleDefinition<OpsModuleDeps> = {
  name: "ops",
  resolvers: [HealthResolver],
  create: createOpsModule,
};
