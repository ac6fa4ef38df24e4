import { Migration } from "@mikro-orm/migrations";
import type { MigrationSpec } from "../module.js";

/** A gateway key is bound to a gateway configuration (it was a check on the column m0007 moved into target_ref). */
class GatewayKeyTarget extends Migration {
  override name = "gateway-0001-key-target";

  up(): void {
    this.addSql(
      `alter table api_key add constraint api_key_gateway_target check (kind <> 'gateway' or target_ref is not null)`,
    );
  }
}

/** The gateway area's own migrations, run after the central ones (module.ts). */
export const GATEWAY_MIGRATIONS: MigrationSpec[] = [{ name: "gateway-0001-key-target", class: GatewayKeyTarget }];
