import { Migration } from "@mikro-orm/migrations";

/**
 * Issue 20. The late watch of the generic QR area: an EXPIRED transaction keeps a next check while a late payment is
 * still looked for (docs/decisions/0107-late-payments.md, issue 20). This partial index covers exactly those rows,
 * as transaction_due_idx covers the pending ones. And the operator-replaced network token (qr/network-token.ts).
 */
export class M0003Upstreams extends Migration {
  override name = "m0003-upstreams";

  up(): void {
    this.addSql(
      `create index if not exists transaction_late_due_idx on "transaction" (area, next_check_at)
       where status = 'EXPIRED' and next_check_at is not null`,
    );
    // Upstream credentials an operator replaces at run time (the network token), encrypted with SECRET_KEY.
    this.addSql(
      `create table if not exists upstream_credential (name text primary key, sealed text not null,
       updated_at timestamptz not null)`,
    );
    // A merchant's deeplink settings (generate_deeplink_by_qr's sourceInfo).
    for (const col of ["deeplink_app_name", "deeplink_app_icon_url", "deeplink_callback"])
      this.addSql(`alter table merchant add column if not exists ${col} text`);
  }
}
