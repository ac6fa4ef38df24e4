import { Arg, Ctx, Field, ID, Mutation, ObjectType, Resolver, registerEnumType } from "type-graphql";
import type { GqlContext } from "../graphql/context.js";
import { TransactionGql, toTransactionGql } from "./transactions.types.js";
import type { PaymentRechecks } from "./recheck.js";

export enum RecheckOutcomeGql {
  PAID = "PAID",
  MISMATCHED = "MISMATCHED",
  FAILED = "FAILED",
  NOT_PAID = "NOT_PAID",
  UPSTREAM_UNAVAILABLE = "UPSTREAM_UNAVAILABLE",
}
registerEnumType(RecheckOutcomeGql, {
  name: "RecheckOutcome",
  description: "What the upstream said when asked again",
  valuesConfig: {
    PAID: { description: "Paid as asked: SUCCESS (late: true when the transaction had expired), payment.completed" },
    MISMATCHED: { description: "Paid, but not what was asked: held for an operator (payment.mismatched)" },
    FAILED: { description: "The upstream reports the payment failed (recorded only while it was still waiting)" },
    NOT_PAID: { description: "No payment (still waiting, or unchanged)" },
    UPSTREAM_UNAVAILABLE: { description: "The upstream could not be asked or did not answer: nothing changed" },
  },
});

@ObjectType("RecheckResult", { description: "A recheck's answer: the transaction as it now is, and what was said" })
export class RecheckResultGql {
  @Field(() => TransactionGql) transaction!: TransactionGql;
  @Field(() => RecheckOutcomeGql) outcome!: RecheckOutcomeGql;
  @Field({ description: "What the upstream said, in a sentence (and whether it was recorded)" }) detail!: string;
  @Field({ description: "This recheck changed the transaction (an event was committed)" }) recorded!: boolean;
  @Field({ description: "Until when this transaction may be rechecked (its area's window)" }) windowEndsAt!: Date;
}

@Resolver()
export class RecheckResolver {
  constructor(private readonly rechecks: PaymentRechecks) {}

  @Mutation(() => RecheckResultGql, {
    description:
      "Asks the upstream again about a PENDING, CHECKOUT or EXPIRED payment, within its area's window, and records " +
      "a paid answer as the monitors do (an expired one as a late SUCCESS, payment.completed with late: true). An " +
      "API key rechecks its own transactions (another's is NOT_FOUND), the admin token any. At most one a transaction " +
      "per 10 s and 10 a minute per credential (RATE_LIMITED)",
  })
  async recheckPayment(
    @Arg("transactionId", () => ID) transactionId: string,
    @Ctx() ctx: GqlContext,
  ): Promise<RecheckResultGql> {
    const r = await this.rechecks.recheck(ctx.principal, transactionId);
    return {
      transaction: toTransactionGql(r.tx),
      outcome: r.outcome as RecheckOutcomeGql,
      detail: r.detail,
      recorded: r.recorded,
      windowEndsAt: r.windowEndsAt,
    };
  }
}
