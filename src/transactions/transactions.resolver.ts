import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root } from "type-graphql";
import QRCode from "qrcode";
import type { GqlContext } from "../graphql/context.js";
import type { TransactionQuery } from "./transaction-query.js";
import { requestLoader } from "../graphql/per-request.js";
import { TransactionEventGql, toEventGql } from "./transaction.types.js";
import {
  TransactionConnectionGql,
  TransactionFilterGql,
  TransactionGql,
  toTransactionGql,
} from "./transactions.types.js";

/**
 * Read queries over all three areas (the dashboard's live table and detail view; usable by any client).
 * Scoped by the caller: an API key sees what it created, a clientToken its one transaction, the admin token everything.
 */
@Resolver(() => TransactionGql)
export class TransactionsResolver {
  /** QR string → its PNG data URL (the last 500 rendered). */
  private readonly images = new Map<string, Promise<string>>();

  constructor(private readonly query: TransactionQuery) {}

  @Query(() => TransactionConnectionGql, { description: "Newest first, Relay-style cursor pages (first ≤ 100)" })
  async transactions(
    @Arg("first", () => Int, { defaultValue: 20 }) first: number,
    @Arg("after", () => String, { nullable: true }) after: string | undefined,
    @Arg("filter", () => TransactionFilterGql, { nullable: true }) filter: TransactionFilterGql | undefined,
    @Ctx() ctx: GqlContext,
  ): Promise<TransactionConnectionGql> {
    const page = await this.query.page(ctx.principal, { first, after, filter });
    const edges = page.rows.map((r) => ({ cursor: r.cursor, node: toTransactionGql(r.tx) }));
    return {
      edges,
      pageInfo: {
        hasNextPage: page.hasNextPage,
        hasPreviousPage: false,
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      },
    };
  }

  @Query(() => TransactionGql, { nullable: true, description: "Null when it does not exist or is not the caller's" })
  async transaction(@Arg("id", () => ID) id: string, @Ctx() ctx: GqlContext): Promise<TransactionGql | null> {
    const tx = await this.query.one(ctx.principal, id);
    return tx === null ? null : toTransactionGql(tx);
  }

  // The rows of one answer ask together: one statement for every timeline (and one for the names) of a page.
  @FieldResolver(() => [TransactionEventGql], { description: "The timeline: every committed change, oldest first" })
  async events(@Root() tx: TransactionGql, @Ctx() ctx: GqlContext): Promise<TransactionEventGql[]> {
    const timelines = requestLoader(ctx, "transaction.events", (ids: readonly string[]) => this.query.timelines(ids));
    return (await timelines.load(tx.id)).map(toEventGql);
  }

  @FieldResolver(() => String, {
    nullable: true,
    description: "The merchant's display name (as the payer's app shows it)",
  })
  async merchantName(@Root() tx: TransactionGql, @Ctx() ctx: GqlContext): Promise<string | null> {
    const names = requestLoader(ctx, "transaction.merchantName", (refs: readonly string[]) =>
      this.query.merchantNames(refs),
    );
    return names.load(tx.merchantId);
  }

  @FieldResolver(() => String, { nullable: true, description: "The QR as a PNG data URL (rendered on request)" })
  async qrImage(@Root() tx: TransactionGql): Promise<string | null> {
    if (tx.qr === null) return null;
    // A transaction's QR never changes: rendered once, kept for the next read (a checkout page polls).
    let png = this.images.get(tx.qr);
    if (png === undefined) {
      png = QRCode.toDataURL(tx.qr, { errorCorrectionLevel: "M", margin: 1, width: 256 });
      this.images.set(tx.qr, png);
      png.catch(() => this.images.delete(tx.qr as string));
      if (this.images.size > 500) this.images.delete(this.images.keys().next().value as string);
    }
    return png;
  }
}
