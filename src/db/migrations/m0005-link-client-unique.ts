import { Migration } from "@mikro-orm/migrations";

/**
 * One upstream payment-link session belongs to one payment: a page that answers a new visit with a session
 * another payment of the merchant already holds must be refused, not recorded as a second payment the first
 * one's approval would pay.
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
