import { Entity, PrimaryKey, Property } from "@mikro-orm/decorators/legacy";
import { newId } from "../ids.js";

export type PayeeSource = "operator" | "first-qr";

/** A hosted payment-link page (URL + currency). A gateway-link key is bound to exactly one. */
@Entity({ tableName: "link_config" })
export class LinkConfig {
  @PrimaryKey({ type: "text" }) id: string = newId("lnk");
  @Property({ type: "text" }) merchantRef!: string;
  @Property({ type: "text" }) name!: string;
  @Property({ type: "text" }) url!: string;
  @Property({ type: "integer" }) currency!: 116 | 840;
  /** The page's adapter (`payway`, the one there is: link-protocol.ts); null: the default, the same. */
  @Property({ type: "text", nullable: true }) protocol: string | null = null;
  /** The KHQR account (tag 29/30 sub 00) every QR of this link must pay; null: the next QR records it. */
  @Property({ type: "text", nullable: true }) expectedPayee: string | null = null;
  /** Who set expectedPayee: `operator`, or `first-qr` (recorded from the link's first QR). */
  @Property({ type: "text", nullable: true }) expectedPayeeSource: PayeeSource | null = null;
  @Property({ type: "timestamptz" }) createdAt: Date = new Date();
  @Property({ type: "timestamptz", onUpdate: () => new Date() }) updatedAt: Date = new Date();
}
