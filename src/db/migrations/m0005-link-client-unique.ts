import { Migration } from "@mikro-orm/migrations";

/**
 * One upstream payment-link session belongs to one payment: a merchant's pages on one site share a browser
 * context (gateway-link/browser.ts), so a page that resumed another payment's session from shared browser
 * state must be refused, not recorded as a second payment the first one's approval would pay.
 */
export class M0005LinkClientUnique extends Migration {
  override name = "m0005-link-client-unique";

  up(): void {
    this.addSql(
      `create unique index if not exists transaction_link_client_uq on "transaction" (merchant_ref, client_id) ` +
        `where area = 'gateway_link' and client_id is not null`,
    );
  }
}
