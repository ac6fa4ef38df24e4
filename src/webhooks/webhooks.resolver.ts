import { Arg, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from "type-graphql";
import { requireAdmin, type GqlContext } from "../graphql/context.js";
import type { WebhookEndpoint } from "./webhook-endpoint.entity.js";
import type { DeliveryView } from "./endpoint-service.js";

@ObjectType("WebhookEndpoint")
export class WebhookEndpointGql {
  @Field(() => ID) id!: string;
  @Field(() => ID) apiKeyId!: string;
  @Field() url!: string;
  @Field(() => [String], { description: "Event kinds delivered; empty means all" }) events!: string[];
  @Field() enabled!: boolean;
  @Field(() => String, { nullable: true, description: "Why it was disabled (by the operator, or automatically after continuous failures)" }) disabledReason!: string | null;
  @Field(() => Date, { nullable: true }) failingSince!: Date | null;
  @Field(() => Date, { nullable: true, description: "Until when the previous secret still signs (rotation overlap)" }) previousSecretExpiresAt!: Date | null;
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
  @Field(() => Int, { nullable: true }) statusCode!: number | null;
  @Field(() => Int) latencyMs!: number;
  @Field(() => String, { nullable: true }) error!: string | null;
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
  @Field(() => [WebhookAttemptGql]) log!: WebhookAttemptGql[];
}

export const toEndpointGql = (e: WebhookEndpoint): WebhookEndpointGql => ({
  id: e.id, apiKeyId: e.apiKeyRef, url: e.url, events: e.events, enabled: e.enabled, disabledReason: e.disabledReason,
  failingSince: e.failingSince, previousSecretExpiresAt: e.previousSecretExpiresAt, createdAt: e.createdAt,
});

/** Operator API for webhook endpoints and their delivery log. */
@Resolver()
export class WebhooksResolver {
  @Query(() => [WebhookEndpointGql])
  async webhookEndpoints(@Arg("apiKeyId", () => ID, { nullable: true }) apiKeyId: string | undefined, @Ctx() ctx: GqlContext): Promise<WebhookEndpointGql[]> {
    requireAdmin(ctx);
    return (await ctx.services.webhooks.list(apiKeyId)).map(toEndpointGql);
  }

  @Mutation(() => WebhookEndpointWithSecretGql)
  async createWebhookEndpoint(@Arg("input", () => WebhookEndpointInputGql) input: WebhookEndpointInputGql, @Ctx() ctx: GqlContext): Promise<WebhookEndpointWithSecretGql> {
    requireAdmin(ctx);
    const { endpoint, secret } = await ctx.services.webhooks.create({ apiKeyId: input.apiKeyId ?? "", url: input.url ?? "", events: input.events });
    return { secret, endpoint: toEndpointGql(endpoint) };
  }

  @Mutation(() => WebhookEndpointGql)
  async updateWebhookEndpoint(@Arg("id", () => ID) id: string, @Arg("input", () => WebhookEndpointInputGql) input: WebhookEndpointInputGql, @Ctx() ctx: GqlContext): Promise<WebhookEndpointGql> {
    requireAdmin(ctx);
    return toEndpointGql(await ctx.services.webhooks.update(id, { url: input.url, events: input.events, enabled: input.enabled }));
  }

  @Mutation(() => WebhookEndpointWithSecretGql, { description: "New secret; the old one keeps signing (a second v1= value) for overlapMinutes" })
  async rotateWebhookSecret(@Arg("id", () => ID) id: string, @Arg("overlapMinutes", () => Int, { defaultValue: 1440 }) overlapMinutes: number, @Ctx() ctx: GqlContext): Promise<WebhookEndpointWithSecretGql> {
    requireAdmin(ctx);
    const { endpoint, secret } = await ctx.services.webhooks.rotateSecret(id, overlapMinutes);
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
    return ctx.services.webhooks.deliveries({ endpointId, eventId, transactionId, first });
  }

  @Mutation(() => WebhookDeliveryGql)
  async redeliverWebhook(@Arg("eventId", () => ID) eventId: string, @Arg("endpointId", () => ID) endpointId: string, @Ctx() ctx: GqlContext): Promise<DeliveryView> {
    requireAdmin(ctx);
    const view = await ctx.services.webhooks.redeliver(eventId, endpointId);
    void ctx.services.dispatcher?.kick();
    return view;
  }
}
