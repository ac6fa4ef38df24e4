import { Field, FieldResolver, Int, ObjectType, Resolver, Root } from "type-graphql";
import type { Db } from "../db/sql.js";
import { OverviewGql } from "../transactions/overview.types.js";
import { webhookHealth, type WebhookHealth } from "./health.js";

@ObjectType("WebhookHealth", { description: "Webhook deliveries created in the overview's window; endpoints as now" })
export class WebhookHealthGql {
  @Field(() => Int) delivered!: number;
  @Field(() => Int, { description: "Still pending after at least one failed attempt" }) retrying!: number;
  @Field(() => Int, { description: "Given up after the retries" }) failed!: number;
  @Field(() => Int, { description: "Enabled endpoints failing now (failing since their last success)" })
  failingEndpoints!: number;
  @Field(() => Int) disabledEndpoints!: number;
  @Field(() => Int, {
    nullable: true,
    description: "95th percentile of these deliveries' attempts' latency (ms); null without attempts",
  })
  p95LatencyMs!: number | null;
}

/** The webhooks side of the overview (the transactions module knows nothing of webhooks). */
@Resolver(() => OverviewGql)
export class OverviewWebhooksResolver {
  constructor(private readonly db: Db) {}

  @FieldResolver(() => WebhookHealthGql, { description: "Webhook health in the same window (by delivery creation)" })
  async webhooks(@Root() o: OverviewGql): Promise<WebhookHealth> {
    return webhookHealth(this.db, { from: o.from, to: o.to, merchantId: o.merchantId, area: o.area });
  }
}
