import { Field, Float, ID, Int, ObjectType, registerEnumType } from "type-graphql";
import { AREA_ENUM, type AreaGql } from "./transaction.types.js";
import { MONEY_DESCRIPTION } from "../money/money.js";
import type { OverviewArgs, OverviewFigures } from "./overview.js";

export enum OverviewBucketGql {
  HOUR = "HOUR",
  DAY = "DAY",
}
registerEnumType(OverviewBucketGql, { name: "OverviewBucket" });

@ObjectType("OverviewCounts", { description: "Payments created in the window, by their status as reads show it" })
export class OverviewCountsGql {
  @Field(() => Int, { description: "Payments created" }) payments!: number;
  @Field(() => Int, { description: "SUCCESS" }) paid!: number;
  @Field(() => Int, { description: "FAILED" }) failed!: number;
  @Field(() => Int, { description: "EXPIRED, including pending payments past their expiry" }) expired!: number;
  @Field(() => Int, { description: "Still PENDING or CHECKOUT (not yet expired)" }) pending!: number;
  @Field(() => Int, { description: "Paid late (after the expiry, or seen only after it): to reconcile" }) late!: number;
  @Field(() => Int, { description: "paid + failed + expired" }) finished!: number;
  @Field(() => Float, {
    nullable: true,
    description: "paid / finished (SUCCESS + FAILED + EXPIRED), 0 to 1; null when none finished",
  })
  successRate!: number | null;
}

@ObjectType("OverviewPoint", { description: "One bucket of a currency's series" })
export class OverviewPointGql {
  @Field({ description: "The bucket's start: a Phnom Penh (UTC+7) local hour or midnight" }) start!: Date;
  @Field(() => OverviewCountsGql) counts!: OverviewCountsGql;
  @Field({ description: `Sum of the paid payments' amounts. ${MONEY_DESCRIPTION}` }) paidAmount!: string;
}

@ObjectType("OverviewCurrency", { description: "One currency's figures (currencies are never added together)" })
export class OverviewCurrencyGql {
  @Field({ description: "USD or KHR" }) currency!: string;
  @Field(() => OverviewCountsGql) counts!: OverviewCountsGql;
  @Field({ description: `Sum of the paid payments' amounts. ${MONEY_DESCRIPTION}` }) paidAmount!: string;
  @Field(() => [OverviewPointGql], { description: "Every bucket of the window in order, zero-filled" })
  series!: OverviewPointGql[];
}

@ObjectType("OverviewMoney")
export class OverviewMoneyGql {
  @Field() currency!: string;
  @Field(() => Int, { description: "Paid payments" }) count!: number;
  @Field({ description: MONEY_DESCRIPTION }) amount!: string;
}

@ObjectType("OverviewGroup", { description: "A merchant's or an area's share of the window" })
export class OverviewGroupGql {
  @Field(() => ID, { description: "The merchant's id, or the area" }) id!: string;
  @Field(() => String, { nullable: true, description: "The merchant's name (null for an area)" }) name!: string | null;
  @Field(() => OverviewCountsGql, { description: "All currencies' payments counted together" })
  counts!: OverviewCountsGql;
  @Field(() => [OverviewMoneyGql], { description: "Paid count and amount per currency it has payments in" })
  paid!: OverviewMoneyGql[];
}

@ObjectType("Overview", {
  description:
    "What happened to the payments created in [from, to): per currency, per bucket, by merchant and by area. " +
    "Buckets are hours when the range is at most 48 hours, else days, aligned to Asia/Phnom_Penh (UTC+7, no " +
    "daylight saving time) local hours and midnights; every bucket of the range is present (zero-filled).",
})
export class OverviewGql {
  @Field() from!: Date;
  @Field() to!: Date;
  @Field(() => ID, { nullable: true }) merchantId!: string | null;
  @Field(() => AREA_ENUM.values, { nullable: true }) area!: AreaGql | null;
  @Field(() => OverviewBucketGql, { description: "HOUR when the range is at most 48 hours, else DAY" })
  bucket!: OverviewBucketGql;
  @Field({ description: "The buckets' time zone: Asia/Phnom_Penh (UTC+7, no daylight saving time)" })
  timeZone!: string;
  @Field(() => OverviewCountsGql, { description: "All currencies' counts together (no amounts: see currencies)" })
  totals!: OverviewCountsGql;
  @Field(() => [OverviewCurrencyGql], { description: "USD and KHR, always both" })
  currencies!: OverviewCurrencyGql[];
  @Field(() => [OverviewGroupGql], { description: "Merchants with payments in the window, most payments first" })
  merchants!: OverviewGroupGql[];
  @Field(() => [OverviewGroupGql], { description: "Areas with payments in the window, most payments first" })
  areas!: OverviewGroupGql[];
}

export function toOverviewGql(args: OverviewArgs, f: OverviewFigures, timeZone: string): OverviewGql {
  return {
    from: args.from,
    to: args.to,
    merchantId: args.merchantId ?? null,
    area: (args.area as AreaGql | null | undefined) ?? null,
    bucket: f.bucket as OverviewBucketGql,
    timeZone,
    totals: f.totals,
    currencies: f.currencies,
    merchants: f.merchants,
    areas: f.areas,
  };
}
