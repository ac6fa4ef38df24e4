import type { Module, ModuleDefinition } from "../module.js";
import type { Metrics } from "./metrics.js";
import { HealthResolver } from "./health.resolver.js";

/** Who-am-I for clients, and the transitions counter of /metrics. */
export function createOpsModule(deps: { metrics: Metrics }): Module {
  return {
    resolvers: [new HealthResolver()],
    onEvent: (e) => deps.metrics.transitions.inc({ area: e.area, type: e.type }),
  };
}

export const opsModule: ModuleDefinition<{ metrics: Metrics }> = {
  name: "ops",
  resolvers: [HealthResolver],
  create: createOpsModule,
};
