import { Entity, PrimaryKey, Property } from "@mikro-orm/decorators/legacy";
import { newId } from "../ids.js";
import { DEFAULT_QR_IMAGE_TEMPLATE } from "./gateway-rules.js";

/** A merchant's account at the hosted payment gateway. The API secret is stored encrypted and never returned. */
@Entity({ tableName: "gateway_config" })
export class GatewayConfig {
  @PrimaryKey({ type: "text" }) id: string = newId("gwc");
  @Property({ type: "text" }) merchantRef!: string;
  @Property({ type: "text" }) name!: string;
  @Property({ type: "text" }) upstreamMerchantId!: string;
  @Property({ type: "text", hidden: true }) apiSecretEnc!: string;
  /** Sent as qr_image_template, which the QR API requires (gateway-rules.ts); a generate may name another. */
  @Property({ type: "text" }) qrImageTemplate: string = DEFAULT_QR_IMAGE_TEMPLATE;
  @Property({ type: "timestamptz" }) createdAt: Date = new Date();
  @Property({ type: "timestamptz", onUpdate: () => new Date() }) updatedAt: Date = new Date();
}
