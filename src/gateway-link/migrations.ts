import { Migration } from "@mikro-orm/migrations";
import type { MigrationSpec } from "../module.js";

/** A link key is bound to a payment-link configuration (it was a check on the column m0007 moved into target_ref). */
class LinkKeyTarget extends Migration {
  override name = "gateway-link-0001-key-target";

  up(): void {
    this.addSql(
      `alter table api_key add constraint api_key_link_target check (kind <> 'gateway_link' or target_ref is not null)`,
    );
  }
}

/** The payment-link area's own migrations, run after the central ones (module.ts). */
export const LINK_MIGRATIONS: MigrationSpec[] = [{ name: "gateway-link-0001-key-target", class: LinkKeyTarget }];
