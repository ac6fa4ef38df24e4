import { Arg, Ctx, Field, ID, InputType, Mutation, ObjectType, Query, Resolver } from "type-graphql";
import { requireAdmin, type GqlContext } from "../graphql/context.js";
import type { GatewayConfig } from "./gateway-config.entity.js";
import type { GatewayConfigs } from "./gateway-configs.js";

@ObjectType("GatewayConfig", {
  description: "A merchant's account at the hosted gateway. The API secret is write-only.",
})
export class GatewayConfigGql {
  @Field(() => ID) id!: string;
  @Field(() => ID) merchantId!: string;
  @Field() name!: string;
  @Field() upstreamMerchantId!: string;
  @Field() createdAt!: Date;
}

@InputType("GatewayConfigInput")
export class GatewayConfigInputGql {
  @Field(() => ID, { nullable: true }) merchantId?: string;
  @Field({ nullable: true }) name?: string;
  @Field({ nullable: true }) upstreamMerchantId?: string;
  @Field({ nullable: true, description: "Write-only; stored encrypted" }) apiSecret?: string;
}

const toGatewayGql = (g: GatewayConfig): GatewayConfigGql => ({
  id: g.id,
  merchantId: g.merchantRef,
  name: g.name,
  upstreamMerchantId: g.upstreamMerchantId,
  createdAt: g.createdAt,
});

/** Operator API (ADMIN_TOKEN) for the hosted gateway's merchant configurations. */
@Resolver()
export class GatewayConfigResolver {
  constructor(private readonly configs: GatewayConfigs) {}

  @Query(() => [GatewayConfigGql])
  async gatewayConfigs(
    @Arg("merchantId", () => ID, { nullable: true }) merchantId: string | undefined,
    @Ctx() ctx: GqlContext,
  ): Promise<GatewayConfigGql[]> {
    requireAdmin(ctx);
    return (await this.configs.list(merchantId)).map(toGatewayGql);
  }

  @Mutation(() => GatewayConfigGql)
  async createGatewayConfig(
    @Arg("input", () => GatewayConfigInputGql) input: GatewayConfigInputGql,
    @Ctx() ctx: GqlContext,
  ): Promise<GatewayConfigGql> {
    requireAdmin(ctx);
    return toGatewayGql(
      await this.configs.create({
        merchantId: input.merchantId ?? "",
        name: input.name ?? "",
        upstreamMerchantId: input.upstreamMerchantId ?? "",
        apiSecret: input.apiSecret ?? "",
      }),
    );
  }

  @Mutation(() => GatewayConfigGql)
  async updateGatewayConfig(
    @Arg("id", () => ID) id: string,
    @Arg("input", () => GatewayConfigInputGql) input: GatewayConfigInputGql,
    @Ctx() ctx: GqlContext,
  ): Promise<GatewayConfigGql> {
    requireAdmin(ctx);
    return toGatewayGql(await this.configs.update(id, input));
  }
}
