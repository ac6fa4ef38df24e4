import { Entity, PrimaryKey, Property } from "@mikro-orm/decorators/legacy";
import { newId } from "../ids.js";

/** A kind of key: one per area, declared by the area (auth/key-kinds.ts). */
export type KeyKind = string;

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
  /** What the key is bound to, for a kind whose area binds its keys (a gateway or payment-link configuration). */
  @Property({ type: "text", nullable: true }) targetRef: string | null = null;
  @Property({ type: "timestamptz" }) createdAt: Date = new Date();
  @Property({ type: "timestamptz", nullable: true }) lastUsedAt: Date | null = null;
  @Property({ type: "timestamptz", nullable: true }) revokedAt: Date | null = null;
}
