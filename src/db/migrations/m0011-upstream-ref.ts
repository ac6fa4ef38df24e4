import { Migration } from "@mikro-orm/migrations";

/**
 * Areas own their data (docs/decisions/0208-areas-own-their-data.md): the per-area columns of `transaction` become
 * one `upstream_ref` (the upstream's identifier of the payment: the gateway's order id, a QR's md5, a payment link's
 * client id; a row had at most one of them), and the payment link's receipt moves into its part of `upstream`
 * (`receiptUrl`). Existing rows keep every value. The uniqueness the old columns had is each area's own migration
 * now (gateway-0003, gateway-link-0003), run after this one; the lookup by identifier is the core's, so its index is
 * here.
 */
export class M0011UpstreamRef extends Migration {
  override name = "m0011-upstream-ref";

  up(): void {
    this.addSql(`alter table "transaction" add column if not exists upstream_ref text`);
    this.addSql(`update "transaction" set upstream_ref = coalesce(order_id, md5, client_id)
      where upstream_ref is null and coalesce(order_id, md5, client_id) is not null`);
    this.addSql(`update "transaction" set upstream = upstream || jsonb_build_object('receiptUrl', receipt_url)
      where receipt_url is not null`);
    this.addSql(`drop index if exists transaction_gateway_order_uq`);
    this.addSql(`drop index if exists transaction_md5_idx`);
    this.addSql(`drop index if exists transaction_link_client_uq`);
    this.addSql(`alter table "transaction" drop column if exists order_id, drop column if exists md5,
      drop column if exists client_id, drop column if exists receipt_url`);
    this.addSql(
      `create index if not exists transaction_upstream_ref_idx on "transaction" (upstream_ref) where upstream_ref is not null`,
    );
  }
}
