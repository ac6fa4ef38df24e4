import { Entity, PrimaryKey, Property } from "@mikro-orm/decorators/legacy";

/** The area that issued a transaction: one of the module list's areas (its key kind, module.ts AreaDefinition). */
export type Area = string;
export type TxStatus = "PENDING" | "CHECKOUT" | "SUCCESS" | "FAILED" | "EXPIRED";
export const TERMINAL: readonly TxStatus[] = ["SUCCESS", "FAILED", "EXPIRED"];
export type Json = Record<string, unknown>;

/**
 * One table for every area (the "entity family"): common columns, the upstream's identifier of the payment
 * (`upstreamRef`, whatever the area calls it) and the area's own part (`upstream`): an area's data is its own
 * (docs/decisions/0208-areas-own-their-data.md). Status changes only through transition().
 */
@Entity({ tableName: "transaction" })
export class Transaction {
  @PrimaryKey({ type: "text" }) id!: string;
  @Property({ type: "text" }) area!: Area;
  @Property({ type: "text" }) merchantRef!: string;
  @Property({ type: "text" }) apiKeyRef!: string;
  @Property({ type: "text" }) status!: TxStatus;
  /** Exact decimal as text (numeric(20,2) in the database). */
  @Property({ type: "decimal", precision: 20, scale: 2 }) amount!: string;
  @Property({ type: "text" }) currency!: "USD" | "KHR";
  @Property({ type: "text", nullable: true }) upstreamRef: string | null = null;
  @Property({ type: "text", nullable: true }) qr: string | null = null;
  @Property({ type: "json", columnType: "json" }) meta: Json = {};
  @Property({ type: "json" }) request: Json = {};
  @Property({ type: "json" }) upstream: Json = {};
  @Property({ type: "timestamptz" }) expiresAt!: Date;
  @Property({ type: "timestamptz" }) createdAt!: Date;
  @Property({ type: "timestamptz" }) updatedAt!: Date;
  @Property({ type: "timestamptz", nullable: true }) completedAt: Date | null = null;
  @Property({ type: "timestamptz", nullable: true }) nextCheckAt: Date | null = null;
  @Property({ type: "integer" }) checkFailures: number = 0;
  @Property({ type: "integer" }) version: number = 1;
}
