import { Field, ID, ObjectType, registerEnumType } from "type-graphql";
import { MONEY_DESCRIPTION } from "./money.js";
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

@ObjectType("GatewayStatus")
export class GatewayStatusGql {
  @Field() code!: string;
  @Field() message!: string;
}

@ObjectType("TransactionSnapshot", {
  description: "A transaction as events, webhooks and subscriptions show it (all areas)",
})
export class TransactionSnapshotGql {
  @Field(() => ID) transactionId!: string;
  @Field(() => AREA_ENUM.values) area!: AreaGql;
  @Field(() => TxStatusGql) status!: TxStatusGql;
  @Field({ description: MONEY_DESCRIPTION }) amount!: string;
  @Field() currency!: string;
  @Field(() => String, { nullable: true }) orderId?: string;
  @Field(() => String, { nullable: true }) md5?: string;
  @Field(() => String, { nullable: true }) clientId?: string;
  @Field(() => String, { nullable: true }) receiptUrl?: string;
  @Field(() => GatewayStatusGql, { nullable: true }) gatewayStatus?: GatewayStatusGql;
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
