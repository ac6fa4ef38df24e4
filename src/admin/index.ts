import type { Module, ModuleDefinition } from "../module.js";
import type { AdminService } from "./admin-service.js";
import { AdminResolver } from "./admin.resolver.js";
import { Merchant } from "./merchant.entity.js";
import { ApiKey } from "../auth/api-key.entity.js";

/** The operator API (ADMIN_TOKEN): merchants and API keys (each area serves its own configurations). */
export function createAdminModule(deps: { admin: AdminService }): Module {
  return { resolvers: [new AdminResolver(deps.admin)] };
}

export const adminModule: ModuleDefinition<{ admin: AdminService }> = {
  name: "admin",
  entities: [Merchant, ApiKey],
  resolvers: [AdminResolver],
  create: createAdminModule,
};
