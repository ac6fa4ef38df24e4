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

/**
 * The account every QR of a link must pay (KHQR tag 29/30 sub 00), and who set it: the operator, or the link's
 * first QR (trust on first use, docs/decisions/0171-link-configuration-expected-payee.md). Rows made before have
 * neither: their next QR records it.
 */
class LinkExpectedPayee extends Migration {
  override name = "gateway-link-0002-expected-payee";

  up(): void {
    this.addSql(`alter table link_config add column if not exists expected_payee text`);
    this.addSql(
      `alter table link_config add column if not exists expected_payee_source text ` +
        `check (expected_payee_source in ('operator','first-qr'))`,
    );
  }
}

/**
 * The old simulated page and its adapter are gone (docs/decisions/0216-the-old-simulated-link-page-retired.md): a
 * configuration that named `simulated` names none now (the default, payway), the column takes `payway` or null, and
 * the page monitors' queued jobs, which no worker defines any more, are dropped. A payment of such a page still
 * pending has no poll session: the `link.expire` sweep ends it at its expiry.
 */
class LinkPaywayOnly extends Migration {
  override name = "gateway-link-0004-payway-only";

  up(): void {
    this.addSql(`update link_config set protocol = null where protocol = 'simulated'`);
    this.addSql(`alter table link_config drop constraint if exists link_config_protocol_check`);
    this.addSql(`alter table link_config add constraint link_config_protocol_check check (protocol = 'payway')`);
    this.addSql(
      `do $$ begin if to_regclass('agenda_jobs') is not null then ` +
        `delete from agenda_jobs where name = 'link.monitor'; end if; end $$`,
    );
  }
}

/**
 * One payment-link session per payment of a merchant: a page that answers with a client id another payment already
 * holds is refused at insert (link-service.ts). The client id is the area's upstream identifier (m0011 moved it
 * into upstream_ref).
 */
class LinkClientUnique extends Migration {
  override name = "gateway-link-0003-client-unique";

  up(): void {
    this.addSql(
      `create unique index if not exists transaction_link_ref_uq on "transaction" (merchant_ref, upstream_ref) ` +
        `where area = 'gateway_link' and upstream_ref is not null`,
    );
  }
}

/** The payment-link area's own migrations, run after the central ones (module.ts). */
export const LINK_MIGRATIONS: MigrationSpec[] = [
  { name: "gateway-link-0001-key-target", class: LinkKeyTarget },
  { name: "gateway-link-0002-expected-payee", class: LinkExpectedPayee },
  { name: "gateway-link-0003-client-unique", class: LinkClientUnique },
  { name: "gateway-link-0004-payway-only", class: LinkPaywayOnly },
];
