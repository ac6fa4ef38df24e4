import { Field, ID, InputType, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "graphql-scalars";
import { AREA_ENUM, type AreaGql, MismatchGql, TxStatusGql } from "./transaction.types.js";
import { mismatchOf, mismatchView } from "./mismatch.js";
import type { TxRecord } from "./record.js";
import { stringifyExact } from "../exact-json.js";
import { MONEY_DESCRIPTION, moneyText } from "../money/money.js";
import { failureReason } from "./failure-reason.js";

/**
 * A transaction of any area. Its areas' own fields are not declared here: each area declares them
 * (AreaDefinition.data) and app.ts adds them to this type (area-fields.ts), read from `record`.
 */
@ObjectType("Transaction", { description: "A transaction of any area, as the dashboard and clients read it" })
export class TransactionGql {
  /** The row it shows (no GraphQL field): the areas' fields are read from it. */
  record!: TxRecord;
  @Field(() => ID) id!: string;
  @Field(() => AREA_ENUM.values) area!: AreaGql;
  @Field(() => TxStatusGql) status!: TxStatusGql;
  @Field({ description: MONEY_DESCRIPTION }) amount!: string;
  @Field() currency!: string;
  @Field(() => ID) merchantId!: string;
  @Field(() => ID) apiKeyId!: string;
  @Field(() => String, { nullable: true, description: "The KHQR payload string" }) qr!: string | null;
  @Field({
    description:
      "A late payment to reconcile: paid, but sent after the expiry or seen only after the transaction had expired",
  })
  latePayment!: boolean;
  @Field(() => String, {
    nullable: true,
    description:
      "FAILED only: why, as recorded when it failed (the upstream's refusal or decline, an unreachable page, …)",
  })
  failureReason!: string | null;
  @Field(() => MismatchGql, {
    nullable: true,
    description:
      "A payment that arrived but is not what was asked: held while `resolution` is null (its status stays what it " +
      "was, past expiry too), then what the operator decided",
  })
  mismatch!: MismatchGql | null;
  @Field(() => GraphQLJSONObject) meta!: Record<string, unknown>;
  @Field({
    description:
      "meta as the exact JSON text that was sent (key order, number text), for clients whose JSON parser reorders keys",
  })
  metaJson!: string;
  @Field() expiredAt!: Date;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
  @Field(() => Date, { nullable: true }) completedAt!: Date | null;
}

/**
 * A transaction as the schema shows it. The fields that take work (the failure reason, the mismatch, meta's exact
 * text) are worked out when read: a page of 20 that selects none of them does none of it (0243).
 */
export function toTransactionGql(tx: TxRecord): TransactionGql {
  return {
    record: tx,
    id: tx.id,
    area: tx.area,
    status: tx.status as TxStatusGql,
    amount: moneyText(tx.amount, tx.currency),
    currency: tx.currency,
    merchantId: tx.merchantRef,
    apiKeyId: tx.apiKeyRef,
    qr: tx.qr,
    latePayment: tx.upstream.late === true,
    get failureReason() {
      return failureReason(tx);
    },
    get mismatch() {
      return toMismatchGql(tx);
    },
    meta: tx.meta,
    get metaJson() {
      return stringifyExact(tx.meta);
    },
    expiredAt: tx.expiresAt,
    createdAt: tx.createdAt,
    updatedAt: tx.updatedAt,
    completedAt: tx.completedAt,
  };
}

function toMismatchGql(tx: TxRecord): MismatchGql | null {
  const m = mismatchOf(tx);
  return m === null ? null : (mismatchView(m) as unknown as MismatchGql);
}

@ObjectType("TransactionEdge")
export class TransactionEdgeGql {
  @Field({ description: "Opaque; pass as `after` to continue after this row" }) cursor!: string;
  @Field(() => TransactionGql) node!: TransactionGql;
}

@ObjectType("PageInfo")
export class PageInfoGql {
  @Field() hasNextPage!: boolean;
  @Field({ description: "Always false: pages go forward only (first/after)" }) hasPreviousPage!: boolean;
  @Field(() => String, { nullable: true }) startCursor!: string | null;
  @Field(() => String, { nullable: true }) endCursor!: string | null;
}

@ObjectType("TransactionConnection", { description: "Newest first (createdAt desc, id desc); stable across pages" })
export class TransactionConnectionGql {
  @Field(() => [TransactionEdgeGql]) edges!: TransactionEdgeGql[];
  @Field(() => PageInfoGql) pageInfo!: PageInfoGql;
}

@InputType("TransactionFilter")
export class TransactionFilterGql {
  @Field(() => AREA_ENUM.values, { nullable: true }) area?: AreaGql;
  @Field(() => TxStatusGql, {
    nullable: true,
    description: "As reads show it: a pending transaction past its expiry counts as EXPIRED",
  })
  status?: TxStatusGql;
  @Field(() => Date, { nullable: true, description: "Created at or after this instant" }) createdFrom?: Date;
  @Field(() => Date, { nullable: true, description: "Created before this instant (exclusive)" }) createdTo?: Date;
  /** Its description names the areas' fields it matches too: area-fields.ts writes it for each app's areas. */
  @Field(() => String, { nullable: true, description: "transactionId: exact, or a prefix of one" })
  search?: string;
  @Field(() => Boolean, { nullable: true, description: "Only late payments (true) or only the others (false)" })
  latePayment?: boolean;
  @Field(() => Boolean, {
    nullable: true,
    description: "Only held payments, waiting for an operator (true), or only the others (false)",
  })
  mismatched?: boolean;
}
