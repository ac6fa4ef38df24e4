import {
  Arg,
  Ctx,
  Field,
  FieldResolver,
  ID,
  InputType,
  Int,
  Mutation,
  ObjectType,
  Query,
  Resolver,
  Root,
} from "type-graphql";
import { requireAdmin, type GqlContext } from "../graphql/context.js";
import type { WebhookEndpoint } from "./webhook-endpoint.entity.js";
import type { DeliveryView, WebhookEndpointService } from "./endpoint-service.js";
import type { WebhookDispatcher } from "./dispatcher.js";
import { TransactionGql } from "../transactions/transactions.types.js";
import { requestLoader } from "../graphql/per-request.js";

@ObjectType("WebhookEndpoint")
export class WebhookEndpointGql {
  @Field(() => ID) id!: string;
  @Field(() => ID) apiKeyId!: string;
  @Field() url!: string;
  @Field(() => [String], { description: "Event kinds delivered; empty means all" }) events!: string[];
  @Field() enabled!: boolean;
  @Field(() => String, {
    nullable: true,
    description: "Why it was disabled (by the operator, or automatically after continuous failures)",
  })
  disabledReason!: string | null;
  @Field(() => Date, { nullable: true }) failingSince!: Date | null;
  @Field(() => Date, { nullable: true, description: "Until when the previous secret still signs (rotation overlap)" })
  previousSecretExpiresAt!: Date | null;
  @Field() createdAt!: Date;
}

@ObjectType("WebhookEndpointWithSecret")
export class WebhookEndpointWithSecretGql {
  @Field({ description: "The signing secret. Shown only in this response." }) secret!: string;
  @Field(() => WebhookEndpointGql) endpoint!: WebhookEndpointGql;
}

@InputType("WebhookEndpointInput")
export class WebhookEndpointInputGql {
  @Field(() => ID, { nullable: true }) apiKeyId?: string;
  @Field({ nullable: true }) url?: string;
  @Field(() => [String], { nullable: true }) events?: string[];
  @Field({ nullable: true }) enabled?: boolean;
}

@ObjectType("WebhookAttempt")
export class WebhookAttemptGql {
  @Field() attemptedAt!: Date;
  @Field(() => Int, { nullable: true, description: "The endpoint's HTTP status; null when nothing answered" })
  statusCode!: number | null;
  @Field(() => Int) latencyMs!: number;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => String, {
    nullable: true,
    description:
      "Headers sent, one `name: value` a line, the signature redacted (null for attempts logged before headers were kept)",
  })
  requestHeaders!: string | null;
  @Field(() => String, {
    nullable: true,
    description:
      "The answer's headers, one `name: value` a line, credentials redacted, at most 4 KB; null when nothing answered",
  })
  responseHeaders!: string | null;
  @Field(() => String, { nullable: true, description: "The first 4 KB of the answer's body, credentials redacted" })
  responseBody!: string | null;
  @Field({ description: "The answer's body was longer than what was kept" }) responseTruncated!: boolean;
}

@ObjectType("WebhookDelivery")
export class WebhookDeliveryGql {
  @Field(() => ID) id!: string;
  @Field(() => ID) eventId!: string;
  @Field() eventType!: string;
  @Field(() => ID) transactionId!: string;
  @Field(() => ID) endpointId!: string;
  @Field({ description: "pending, delivered or failed (gave up)" }) state!: string;
  @Field(() => Int) attempts!: number;
  @Field(() => Date, { nullable: true }) nextAttemptAt!: Date | null;
  @Field(() => Int, { nullable: true }) lastStatusCode!: number | null;
  @Field(() => String, { nullable: true }) lastError!: string | null;
  @Field(() => Date, { nullable: true }) deliveredAt!: Date | null;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true, description: "The last time it was asked for again (redeliverWebhook)" })
  redeliveredAt!: Date | null;
  @Field({ description: "The exact body every attempt sent (verify a signature against these bytes)" })
  requestBody!: string;
  @Field(() => [WebhookAttemptGql]) log!: WebhookAttemptGql[];
}

export const toEndpointGql = (e: WebhookEndpoint): WebhookEndpointGql => ({
  id: e.id,
  apiKeyId: e.apiKeyRef,
  url: e.url,
  events: e.events,
  enabled: e.enabled,
  disabledReason: e.disabledReason,
  failingSince: e.failingSince,
  previousSecretExpiresAt: e.previousSecretExpiresAt,
  createdAt: e.createdAt,
});

/** Operator API for webhook endpoints and their delivery log. */
@Resolver()
export class WebhooksResolver {
  constructor(
    private readonly webhooks: WebhookEndpointService,
    private readonly dispatcher: WebhookDispatcher | null,
  ) {}

  @Query(() => [WebhookEndpointGql])
  async webhookEndpoints(
    @Arg("apiKeyId", () => ID, { nullable: true }) apiKeyId: string | undefined,
    @Ctx() ctx: GqlContext,
  ): Promise<WebhookEndpointGql[]> {
    requireAdmin(ctx);
    return (await this.webhooks.list(apiKeyId)).map(toEndpointGql);
  }

  @Mutation(() => WebhookEndpointWithSecretGql)
  async createWebhookEndpoint(
    @Arg("input", () => WebhookEndpointInputGql) input: WebhookEndpointInputGql,
    @Ctx() ctx: GqlContext,
  ): Promise<WebhookEndpointWithSecretGql> {
    requireAdmin(ctx);
    const { endpoint, secret } = await this.webhooks.create({
      apiKeyId: input.apiKeyId ?? "",
      url: input.url ?? "",
      events: input.events,
    });
    return { secret, endpoint: toEndpointGql(endpoint) };
  }

  @Mutation(() => WebhookEndpointGql)
  async updateWebhookEndpoint(
    @Arg("id", () => ID) id: string,
    @Arg("input", () => WebhookEndpointInputGql) input: WebhookEndpointInputGql,
    @Ctx() ctx: GqlContext,
  ): Promise<WebhookEndpointGql> {
    requireAdmin(ctx);
    return toEndpointGql(
      await this.webhooks.update(id, { url: input.url, events: input.events, enabled: input.enabled }),
    );
  }

  @Mutation(() => WebhookEndpointWithSecretGql, {
    description: "New secret; the old one keeps signing (a second v1= value) for overlapMinutes",
  })
  async rotateWebhookSecret(
    @Arg("id", () => ID) id: string,
    @Arg("overlapMinutes", () => Int, { defaultValue: 1440 }) overlapMinutes: number,
    @Ctx() ctx: GqlContext,
  ): Promise<WebhookEndpointWithSecretGql> {
    requireAdmin(ctx);
    const { endpoint, secret } = await this.webhooks.rotateSecret(id, overlapMinutes);
    return { secret, endpoint: toEndpointGql(endpoint) };
  }

  @Query(() => [WebhookDeliveryGql], { description: "The delivery log, newest first" })
  async webhookDeliveries(
    @Arg("endpointId", () => ID, { nullable: true }) endpointId: string | undefined,
    @Arg("eventId", () => ID, { nullable: true }) eventId: string | undefined,
    @Arg("transactionId", () => ID, { nullable: true }) transactionId: string | undefined,
    @Arg("first", () => Int, { defaultValue: 50 }) first: number,
    @Ctx() ctx: GqlContext,
  ): Promise<DeliveryView[]> {
    requireAdmin(ctx);
    return this.webhooks.deliveries({ endpointId, eventId, transactionId, first });
  }

  @Mutation(() => WebhookDeliveryGql)
  async redeliverWebhook(
    @Arg("eventId", () => ID) eventId: string,
    @Arg("endpointId", () => ID) endpointId: string,
    @Ctx() ctx: GqlContext,
  ): Promise<DeliveryView> {
    requireAdmin(ctx);
    const view = await this.webhooks.redeliver(eventId, endpointId);
    void this.dispatcher?.kick();
    return view;
  }
}

/** The webhooks side of a transaction: its events' deliveries (the dashboard's detail view). */
@Resolver(() => TransactionGql)
export class TransactionDeliveriesResolver {
  constructor(private readonly webhooks: WebhookEndpointService) {}

  @FieldResolver(() => [WebhookDeliveryGql], {
    description: "Deliveries of this transaction's events, newest first (empty for a clientToken)",
  })
  async webhookDeliveries(
    @Root() tx: TransactionGql,
    @Arg("first", () => Int, { defaultValue: 50 }) first: number,
    @Ctx() ctx: GqlContext,
  ): Promise<DeliveryView[]> {
    // The endpoints belong to the key that created the transaction, so a key sees only its own deliveries.
    if (ctx.principal.type !== "admin" && ctx.principal.type !== "key") return [];
    // The rows of one answer ask together: one statement for all their deliveries (and one for the attempts).
    const loader = requestLoader(ctx, `transaction.webhookDeliveries:${first}`, (ids: readonly string[]) =>
      this.webhooks.deliveriesOf(ids, first),
    );
    return loader.load(tx.id);
  }
}
