import type { Module, ModuleDefinition } from "../module.js";
import type { Config } from "../config.js";
import type { Clock } from "../clock.js";
import type { Orm } from "../db/orm.js";
import type { SecretBox } from "../auth/secret-box.js";
import type { KeyKinds } from "../auth/key-kinds.js";
import type { Invalidations } from "../cache/invalidation.js";
import { AdminService } from "./admin-service.js";
import { AdminResolver } from "./admin.resolver.js";
import { Merchant } from "./merchant.entity.js";
import { ApiKey } from "../auth/api-key.entity.js";

export interface AdminModuleDeps {
  config: Pick<Config, "publicBaseUrl">;
  orm: Orm;
  box: SecretBox;
  /** The kinds of API key this app's areas declare. */
  kinds: KeyKinds;
  invalidations: Invalidations;
  clock: Clock;
}

/** What the admin module builds for the modules after it: the areas check merchants and bind keys through it. */
export interface AdminServices {
  admin: AdminService;
}

export interface AdminModule extends Module {
  provides: AdminServices;
}

/** The operator API (ADMIN_TOKEN): merchants and API keys (each area serves its own configurations). */
export function createAdminModule(deps: AdminModuleDeps): AdminModule {
  const admin = new AdminService(
    deps.orm,
    deps.box,
    deps.kinds,
    deps.invalidations,
    () => deps.clock.now().getTime(),
    deps.config.publicBaseUrl ?? "http://127.0.0.1",
  );
  return { provides: { admin }, resolvers: [new AdminResolver(admin)] };
}

export const adminModule: ModuleDefinition<AdminModuleDeps, AdminModule> = {
  name: "admin",
  entities: [Merchant, ApiKey],
  resolvers: [AdminResolver],
  create: createAdminModule,
};
