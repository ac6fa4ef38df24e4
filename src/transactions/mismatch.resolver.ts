import { Arg, Ctx, Field, ID, InputType, Mutation, Resolver } from "type-graphql";
import { requireAdmin, type GqlContext } from "../graphql/context.js";
import { AppError } from "../errors.js";
import { OneOf, Text } from "../validation/rules.js";
import { refuse } from "../validation/checker.js";
import type { Clock } from "../clock.js";
import type { TransactionStore } from "./transition.js";
import { isHeld, mismatchOf, type MismatchResolution } from "./mismatch.js";
import { TransactionGql, toTransactionGql } from "./transactions.types.js";
import type { TxRecord } from "./record.js";

export const RESOLUTION_ACTIONS = ["ACCEPT_AS_PAID", "MARK_FAILED"] as const;

@InputType("ResolveMismatchInput")
export class ResolveMismatchInputGql {
  @Field(() => ID)
  @Text({ max: 100, required: true })
  transactionId!: string;

  @Field({ description: "ACCEPT_AS_PAID (→ SUCCESS, payment.completed) or MARK_FAILED (→ FAILED, payment.failed)" })
  @OneOf(RESOLUTION_ACTIONS, `must be ${RESOLUTION_ACTIONS.join(" or ")}`)
  action!: string;

  @Field(() => String, {
    nullable: true,
    description:
      'Who resolves it, recorded with the resolution (the dashboard sends "dashboard", the CLI "cli (user@host)")',
  })
  @Text({ max: 100 })
  by?: string;

  @Field(() => String, { nullable: true, description: "Why, recorded with the resolution" })
  @Text({ max: 500 })
  note?: string;
}

/**
 * An operator's resolution of a held payment (docs/decisions/0183-held-payments.md): accepted as paid → SUCCESS
 * (`payment.completed`; a late one keeps `late`), or marked failed → FAILED (`payment.failed`), through the one
 * transition function, recording who (what the operator's client said, with the admin token) and when.
 */
export class MismatchResolutions {
  constructor(
    private readonly store: TransactionStore,
    private readonly clock: Clock,
  ) {}

  async resolve(input: ResolveMismatchInputGql, requestId: string): Promise<TxRecord> {
    const tx = await this.store.get(input.transactionId);
    if (tx === null) throw new AppError("NOT_FOUND", "Transaction not found");
    const mismatch = mismatchOf(tx);
    if (mismatch === null || !isHeld(tx)) throw notHeld(tx, mismatch?.resolution);
    const resolution: MismatchResolution = {
      action: input.action === "ACCEPT_AS_PAID" ? "accepted" : "failed",
      by: input.by?.trim() || "admin API",
      at: this.clock.now().toISOString(),
      requestId,
      note: input.note?.trim() || null,
    };
    const late = mismatch.late === true || tx.status === "EXPIRED";
    const r = await this.store.transition(
      resolution.action === "accepted"
        ? { id: tx.id, to: "SUCCESS", event: "payment.completed", resolution, upstream: late ? { late: true } : {} }
        : {
            id: tx.id,
            to: "FAILED",
            event: "payment.failed",
            resolution,
            upstream: { failure: { message: `marked failed by ${resolution.by}: the payment was not what was asked` } },
          },
    );
    // Another operator resolved it in between: theirs stands, and this one says so.
    if (!r.won) throw notHeld(r.tx, mismatchOf(r.tx)?.resolution);
    return r.tx;
  }
}

function notHeld(tx: TxRecord, resolution: MismatchResolution | undefined): AppError {
  const why =
    resolution !== undefined
      ? `it was ${resolution.action} by ${resolution.by} at ${resolution.at}`
      : `it has no payment that differs from what was asked (status ${tx.status})`;
  return refuse("transactionId", "is not a held payment", `Transaction ${tx.id} is not held: ${why}`);
}

@Resolver()
export class MismatchResolver {
  constructor(private readonly resolutions: MismatchResolutions) {}

  @Mutation(() => TransactionGql, {
    description:
      "Resolves a held payment (one whose `mismatch` has no resolution): ACCEPT_AS_PAID → SUCCESS, MARK_FAILED → " +
      "FAILED; who and when are recorded. Admin only. List them with transactions(filter: { mismatched: true })",
  })
  async resolveMismatch(
    @Arg("input", () => ResolveMismatchInputGql) input: ResolveMismatchInputGql,
    @Ctx() ctx: GqlContext,
  ): Promise<TransactionGql> {
    requireAdmin(ctx);
    return toTransactionGql(await this.resolutions.resolve(input, ctx.requestId));
  }
}
