import { Entity, PrimaryKey, Property } from "@mikro-orm/decorators/legacy";
import { newId } from "../ids.js";

/** A merchant's account at the hosted payment gateway. The API secret is stored encrypted and never returned. */
@Entity({ tableName: "gateway_config" })
export class GatewayConfig {
  @PrimaryKey({ type: "text" }) id: string = newId("gwc");
  @Property({ type: "text" }) merchantRef!: string;
  @Property({ type: "text" }) name!: string;
  @Property({ type: "text" }) upstreamMerchantId!: string;
  @Property({ type: "text", hidden: true }) apiSecretEnc!: string;
  @Property({ type: "timestamptz" }) createdAt: Date = new Date();
  @Property({ type: "timestamptz", onUpdate: () => new Date() }) updatedAt: Date = new Date();
}
