import { Migration } from "@mikro-orm/migrations";

/**
 * The overview's webhook health reads one period's deliveries by creation time; without this index that read scans
 * every delivery ever made (the existing index leads with the endpoint).
 */
export class M0010DeliveryCreatedIndex extends Migration {
  override name = "m0010-delivery-created-index";

  up(): void {
    this.addSql(`create index if not exists webhook_delivery_created_idx on webhook_delivery (created_at)`);
  }
}
