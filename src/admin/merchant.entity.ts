import { Entity, PrimaryKey, Property } from "@mikro-orm/decorators/legacy";
import { newId } from "../ids.js";

/** A merchant and the KHQR account its QR codes pay into. */
@Entity({ tableName: "merchant" })
export class Merchant {
  @PrimaryKey({ type: "text" }) id: string = newId("mer");
  @Property({ type: "text" }) name!: string;
  /** "individual" (KHQR tag 29) or "merchant" (tag 30). */
  @Property({ type: "text" }) accountType: "individual" | "merchant" = "merchant";
  @Property({ type: "text" }) bakongAccountId!: string;
  @Property({ type: "text" }) merchantName!: string;
  @Property({ type: "text" }) merchantCity!: string;
  @Property({ type: "text", nullable: true }) merchantId: string | null = null;
  @Property({ type: "text", nullable: true }) acquiringBank: string | null = null;
  @Property({ type: "text" }) merchantCategoryCode: string = "5999";
  @Property({ type: "integer" }) defaultCurrency: 116 | 840 = 116;
  /** Deeplink settings (the network's generate_deeplink_by_qr sourceInfo): all three or none. */
  @Property({ type: "text", nullable: true }) deeplinkAppName: string | null = null;
  @Property({ type: "text", nullable: true }) deeplinkAppIconUrl: string | null = null;
  @Property({ type: "text", nullable: true }) deeplinkCallback: string | null = null;
  /** Where the checkout page sends this merchant's payers back after the final state (a request's own wins). */
  @Property({ type: "text", nullable: true }) returnUrl: string | null = null;
  @Property({ type: "timestamptz" }) createdAt: Date = new Date();
  @Property({ type: "timestamptz", onUpdate: () => new Date() }) updatedAt: Date = new Date();
}
