import { Arg, Ctx, ID, Query, Resolver } from "type-graphql";
import { requireAdmin, type GqlContext } from "../graphql/context.js";
import type { TransactionQuery } from "./transaction-query.js";
import { AREA_ENUM, type AreaGql } from "./transaction.types.js";
import { OverviewGql, toOverviewGql } from "./overview.types.js";
import { OVERVIEW_TIME_ZONE } from "./overview.js";

/** The operators' overview (the dashboard's first page): admin token only. */
@Resolver(() => OverviewGql)
export class OverviewResolver {
  constructor(private readonly query: TransactionQuery) {}

  @Query(() => OverviewGql, {
    description:
      "Figures of the payments created in [from, to) (to exclusive, at most 400 days), optionally of one merchant " +
      "or area. Buckets: hours when the range is at most 48 hours, else days, aligned to Asia/Phnom_Penh (UTC+7) " +
      "local time, every bucket present (zero-filled). Admin token only.",
  })
  async overview(
    @Arg("from", () => Date) from: Date,
    @Arg("to", () => Date) to: Date,
    @Arg("merchantId", () => ID, { nullable: true }) merchantId: string | undefined,
    @Arg("area", () => AREA_ENUM.values, { nullable: true }) area: AreaGql | undefined,
    @Ctx() ctx: GqlContext,
  ): Promise<OverviewGql> {
    requireAdmin(ctx);
    const args = { from, to, merchantId: merchantId ?? null, area: area ?? null };
    return toOverviewGql(args, await this.query.overview(args), OVERVIEW_TIME_ZONE);
  }
}
