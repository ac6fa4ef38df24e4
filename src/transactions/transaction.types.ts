import type { TxStatus } from "./transaction.entity.js";
import { Field, ID, ObjectType, registerEnumType } from "type-graphql";
import { MONEY_DESCRIPTION } from "../money/money.js";
import { GraphQLJSONObject } from "graphql-scalars";
import { ListedEnum } from "../graphql/listed-enums.js";
import type { StoredEvent } from "./stored-event.js";

/** The areas of the app's module list (graphql/listed-enums.ts): filled by app.ts when its schema is built. */
export const AREA_ENUM = new ListedEnum("Area");
/** An area's name (the enum's values are the areas' key kinds). */
export type AreaGql = string;

export enum TxStatusGql {
  PENDING = "PENDING",
  CHECKOUT = "CHECKOUT",
  SUCCESS = "SUCCESS",
  FAILED = "FAILED",
  EXPIRED = "EXPIRED",
}
registerEnumType(TxStatusGql, { name: "TransactionStatus" });

/**
 * An area's own status enum for its generate and check results: the statuses its answers can carry, in the order
 * given, as a GraphQL enum of its own name (docs/decisions/0248-answer-status-is-an-enum-per-area.md).
 */
export function areaStatusEnum(name: string, description: string, statuses: readonly TxStatus[]): object {
  const values = Object.fromEntries(statuses.map((s) => [s, s]));
  registerEnumType(values, { name, description });
  return values;
}

@ObjectType("PaymentFacts", {
  description: "An amount, its currency and, where the area sees one, the receiving account",
})
export class PaymentFactsGql {
  @Field(() => String, { nullable: true, description: "Exact, with the currency's decimals; null when not stated" })
  amount!: string | null;
  @Field(() => String, { nullable: true }) currency!: string | null;
  @Field(() => String, { nullable: true, description: "The receiving account (generic QR: the network's toAccountId)" })
  account!: string | null;
}

@ObjectType("MismatchResolution", { description: "An operator's decision on a held payment" })
export class MismatchResolutionGql {
  @Field({ description: "accepted (→ SUCCESS) or failed (→ FAILED)" }) action!: string;
  @Field({
    description: "Who resolved it, as the operator's client said (dashboard, cli, admin API), with the admin token",
  })
  by!: string;
  @Field({ description: "When (ISO 8601)" }) at!: string;
  @Field(() => String, { nullable: true }) note!: string | null;
}

@ObjectType("Mismatch", {
  description:
    "A payment that arrived but is not what was asked: held (never SUCCESS) until an operator resolves it " +
    "(resolveMismatch: accept as paid, or mark failed)",
})
export class MismatchGql {
  @Field(() => [String], { description: "What differs: amount, currency, account" }) fields!: string[];
  @Field(() => PaymentFactsGql, { description: "What the transaction asked (the QR issued for it)" })
  expected!: PaymentFactsGql;
  @Field(() => PaymentFactsGql, { description: "What the upstream reported was paid" }) arrived!: PaymentFactsGql;
  @Field(() => String, { nullable: true, description: "The upstream's reference of the payment (network hash, apv)" })
  reference!: string | null;
  @Field({ description: "The answer that reported it" }) source!: string;
  @Field({ description: "When the service saw it (ISO 8601)" }) detectedAt!: string;
  @Field({ description: "Sent after the expiry, or seen after the transaction had expired" }) late!: boolean;
  @Field(() => MismatchResolutionGql, { nullable: true, description: "Null while the payment is held" })
  resolution!: MismatchResolutionGql | null;
}

/** The areas' own keys are not declared here: app.ts adds each area's (AreaDefinition.data, area-fields.ts). */
@ObjectType("TransactionSnapshot", {
  description: "A transaction as events, webhooks and subscriptions show it (all areas)",
})
export class TransactionSnapshotGql {
  @Field(() => ID) transactionId!: string;
  @Field(() => AREA_ENUM.values) area!: AreaGql;
  @Field(() => TxStatusGql) status!: TxStatusGql;
  @Field({ description: MONEY_DESCRIPTION }) amount!: string;
  @Field() currency!: string;
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: "What the upstream reported about the payment (payer, hash, time)",
  })
  payment?: Record<string, unknown>;
  @Field(() => Boolean, {
    nullable: true,
    description: "True on a late payment: paid, but sent after the expiry or seen after the transaction expired",
  })
  late?: boolean;
  @Field(() => MismatchGql, {
    nullable: true,
    description: "A payment that is not what was asked (payment.mismatched and every later event of the transaction)",
  })
  mismatch?: MismatchGql;
  @Field() expiredAt!: string;
  @Field() createdAt!: string;
  @Field() updatedAt!: string;
  @Field(() => String, { nullable: true }) completedAt?: string;
}

@ObjectType("TransactionEvent", {
  description: "One committed change (the outbox row); the same id as the webhook delivery's",
})
export class TransactionEventGql {
  @Field(() => ID) id!: string;
  @Field() type!: string;
  @Field() createdAt!: Date;
  @Field(() => TransactionSnapshotGql) transaction!: TransactionSnapshotGql;
  @Field(() => GraphQLJSONObject) meta!: Record<string, unknown>;
}

export function toEventGql(e: StoredEvent): TransactionEventGql {
  const payload = e.payload as { transaction: TransactionSnapshotGql; meta: Record<string, unknown> };
  return { id: e.id, type: e.type, createdAt: e.createdAt, transaction: payload.transaction, meta: payload.meta ?? {} };
}
