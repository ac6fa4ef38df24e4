import { Entity, PrimaryKey, Property } from "@mikro-orm/decorators/legacy";
import { newId } from "../ids.js";

export type KeyKind = "qr" | "gateway" | "gateway_link";

/** An API key. Only its SHA-256 hash is stored; the plaintext is shown once at creation. */
@Entity({ tableName: "api_key" })
export class ApiKey {
  @PrimaryKey({ type: "text" }) id: string = newId("key");
  @Property({ type: "text" }) merchantRef!: string;
  @Property({ type: "text" }) kind!: KeyKind;
  @Property({ type: "text" }) label: string = "";
  /** The first characters of the key, safe to show in lists. */
  @Property({ type: "text" }) prefix!: string;
  @Property({ type: "text", hidden: true, unique: true }) hash!: string;
  @Property({ type: "text", nullable: true }) gatewayConfigRef: string | null = null;
  @Property({ type: "text", nullable: true }) linkConfigRef: string | null = null;
  @Property({ type: "timestamptz" }) createdAt: Date = new Date();
  @Property({ type: "timestamptz", nullable: true }) lastUsedAt: Date | null = null;
  @Property({ type: "timestamptz", nullable: true }) revokedAt: Date | null = null;
}
