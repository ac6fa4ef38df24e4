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

/**
 * The QR API requires qr_image_template: each configuration names its template; configurations made before have
 * the default (gateway-rules.ts, DEFAULT_QR_IMAGE_TEMPLATE). The list of templates is checked in code, where the
 * page's list lives, so a new template needs no migration.
 */
class GatewayQrImageTemplate extends Migration {
  override name = "gateway-0002-qr-image-template";

  up(): void {
    this.addSql(
      `alter table gateway_config add column if not exists qr_image_template text not null default 'template3_color'`,
    );
  }
}

/** The gateway area's own migrations, run after the central ones (module.ts). */
export const GATEWAY_MIGRATIONS: MigrationSpec[] = [
  { name: "gateway-0001-key-target", class: GatewayKeyTarget },
  { name: "gateway-0002-qr-image-template", class: GatewayQrImageTemplate },
];
