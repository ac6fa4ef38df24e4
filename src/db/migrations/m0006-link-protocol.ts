import { Migration } from "@mikro-orm/migrations";

/**
 * A payment-link configuration names the adapter its page is driven with (`simulated`, `payway`), so one service
 * serves both kinds of page; null keeps LINK_PAGE_PROTOCOL's default, which is what every existing row meant.
 */
export class M0006LinkProtocol extends Migration {
  override name = "m0006-link-protocol";

  up(): void {
    this.addSql(
      `alter table link_config add column if not exists protocol text check (protocol in ('simulated','payway'))`,
    );
  }
}
