import { Arg, Ctx, ID, Query, Resolver } from "type-graphql";
import type { GqlContext } from "../graphql/context.js";
import { AppError } from "../errors.js";
import { checkArgument } from "../validation/checker.js";
import { oneOf } from "../validation/rules.js";
import type { TransactionQuery } from "../transactions/transaction-query.js";
import { cardFacts, renderCardPng, renderCardSvg } from "./card.js";

/** The KHQR card of a transaction the caller may see, as a data URL (the same as GET /cards/{id}.png|.svg). */
@Resolver()
export class CardResolver {
  constructor(private readonly query: Pick<TransactionQuery, "one">) {}

  @Query(() => String, {
    description: "The transaction's KHQR card as a data URL (format png or svg); same card as /cards/{id}.png|.svg",
  })
  async cardImage(
    @Arg("transactionId", () => ID) transactionId: string,
    @Arg("format", () => String, { defaultValue: "png" }) format: string,
    @Ctx() ctx: GqlContext,
  ): Promise<string> {
    checkArgument("format", format, oneOf(["png", "svg"], "must be png or svg"), "invalid format");
    const tx = await this.query.one(ctx.principal, transactionId);
    if (tx === null || tx.qr === null || tx.qr === "") throw new AppError("NOT_FOUND", "Transaction not found");
    const svg = renderCardSvg(cardFacts(tx.qr, { amount: tx.amount, currency: tx.currency }));
    return format === "svg"
      ? `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`
      : `data:image/png;base64,${renderCardPng(svg).toString("base64")}`;
  }
}
