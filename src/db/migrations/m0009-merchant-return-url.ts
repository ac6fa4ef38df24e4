import { Migration } from "@mikro-orm/migrations";

/** Where the checkout page sends a merchant's payers back after the final state (a request's own wins). */
export class M0009MerchantReturnUrl extends Migration {
  override name = "m0009-merchant-return-url";

  up(): void {
    this.addSql(`alter table merchant add column if not exists return_url text`);
  }
}
