import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root } from "type-graphql";
import QRCode from "qrcode";
import type { GqlContext } from "../graphql/context.js";
import { WebhookDeliveryGql } from "../webhooks/webhooks.resolver.js";
import type { DeliveryView } from "../webhooks/endpoint-service.js";
import { TransactionEventGql, toEventGql } from "./transaction.types.js";
import { TransactionConnectionGql, TransactionFilterGql, TransactionGql, toTransactionGql } from "./transactions.types.js";

/**
 * Read queries over all three areas (the dashboard's live table and detail view; usable by any client).
 * Scoped by the caller: an API key sees what it created, a clientToken its one transaction, the admin token everything.
 */
@Resolver(() => TransactionGql)
export class TransactionsResolver {
  @Query(() => TransactionConnectionGql, { description: "Newest first, Relay-style cursor pages (first ≤ 100)" })
  async transactions(
    @Arg("first", () => Int, { defaultValue: 20 }) first: number,
    @Arg("after", () => String, { nullable: true }) after: string | undefined,
    @Arg("filter", () => TransactionFilterGql, { nullable: true }) filter: TransactionFilterGql | undefined,
    @Ctx() ctx: GqlContext,
  ): Promise<TransactionConnectionGql> {
    const page = await ctx.services.transactions.page(ctx.principal, { first, after, filter });
    const edges = page.rows.map((r) => ({ cursor: r.cursor, node: toTransactionGql(r.tx) }));
    return {
      edges,
      pageInfo: { hasNextPage: page.hasNextPage, hasPreviousPage: false, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null },
    };
  }

  @Query(() => TransactionGql, { nullable: true, description: "Null when it does not exist or is not the caller's" })
  async transaction(@Arg("id", () => ID) id: string, @Ctx() ctx: GqlContext): Promise<TransactionGql | null> {
    const tx = await ctx.services.transactions.one(ctx.principal, id);
    return tx === null ? null : toTransactionGql(tx);
  }

  @FieldResolver(() => [TransactionEventGql], { description: "The timeline: every committed change, oldest first" })
  async events(@Root() tx: TransactionGql, @Ctx() ctx: GqlContext): Promise<TransactionEventGql[]> {
    return (await ctx.services.store.eventsSince({ transactionId: tx.id, afterSeq: "0" }, 1000)).map(toEventGql);
  }

  @FieldResolver(() => [WebhookDeliveryGql], { description: "Deliveries of this transaction's events, newest first (empty for a clientToken)" })
  async webhookDeliveries(@Root() tx: TransactionGql, @Arg("first", () => Int, { defaultValue: 50 }) first: number, @Ctx() ctx: GqlContext): Promise<DeliveryView[]> {
    // The endpoints belong to the key that created the transaction, so a key sees only its own deliveries.
    if (ctx.principal.type !== "admin" && ctx.principal.type !== "key") return [];
    return ctx.services.webhooks.deliveries({ transactionId: tx.id, first });
  }

  @FieldResolver(() => String, { nullable: true, description: "The QR as a PNG data URL (rendered on request)" })
  async qrImage(@Root() tx: TransactionGql): Promise<string | null> {
    return tx.qr === null ? null : QRCode.toDataURL(tx.qr, { errorCorrectionLevel: "M", margin: 1, width: 256 });
  }
}
