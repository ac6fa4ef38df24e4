import { Migration } from "@mikro-orm/migrations";

/**
 * A payment-link configuration names the adapter its page is driven with (`simulated`, `payway`), so one service
 * serves both kinds of page; null takes LINK_PAGE_PROTOCOL's default. Rows made before were driven by the only
 * adapter there was: they keep it explicitly, whatever that default is now. (`simulated` is gone since:
 * gateway-link-0004-payway-only.)
 */
export class M0006LinkProtocol extends Migration {
  override name = "m0006-link-protocol";

  up(): void {
    this.addSql(
      `alter table link_config add column if not exists protocol text check (protocol in ('simulated','payway'))`,
    );
    this.addSql(`update link_config set protocol = 'simulated' where protocol is null`);
  }
}
