import { Migration } from "@mikro-orm/migrations";

/**
 * An area is a registration (docs/architecture.md): the central tables no longer list the areas. An API key's
 * kind and a transaction's area are whatever areas the module list has (the admin API refuses any other kind); an
 * API key's target (a gateway or payment-link configuration) moves from one column per area to one `target_ref`,
 * copied before the old columns go. Each area that binds its keys checks it in a migration of its own.
 */
export class M0007AreasRegistered extends Migration {
  override name = "m0007-areas-registered";

  up(): void {
    this.addSql(`alter table api_key add column if not exists target_ref text`);
    this.addSql(
      `update api_key set target_ref = coalesce(gateway_config_ref, link_config_ref) where target_ref is null`,
    );
    this.addSql(`alter table api_key drop constraint if exists api_key_kind_check`);
    this.addSql(`alter table "transaction" drop constraint if exists transaction_area_check`);
    // Their foreign keys and per-kind checks go with them; the areas' own migrations check the target again.
    this.addSql(`alter table api_key drop column if exists gateway_config_ref`);
    this.addSql(`alter table api_key drop column if exists link_config_ref`);
  }
}
