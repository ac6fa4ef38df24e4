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

/**
 * A merchant's order ids are unique in the gateway area (its 409 on a repeated orderId; the service checks first, this
 * backs it at insert): the order id is the area's upstream identifier (m0011 moved it into upstream_ref).
 */
class GatewayOrderUnique extends Migration {
  override name = "gateway-0003-order-unique";

  up(): void {
    this.addSql(
      `create unique index if not exists transaction_gateway_ref_uq on "transaction" (merchant_ref, upstream_ref) ` +
        `where area = 'gateway'`,
    );
  }
}

/** The gateway area's own migrations, run after the central ones (module.ts). */
export const GATEWAY_MIGRATIONS: MigrationSpec[] = [
  { name: "gateway-0001-key-target", class: GatewayKeyTarget },
  { name: "gateway-0002-qr-image-template", class: GatewayQrImageTemplate },
  { name: "gateway-0003-order-unique", class: GatewayOrderUnique },
];
