import { Arg, Ctx, Field, ID, InputType, Mutation, ObjectType, Query, Resolver } from "type-graphql";
import { requireAdmin, type GqlContext } from "../graphql/context.js";
import type { GatewayConfig } from "./gateway-config.entity.js";
import type { GatewayConfigs } from "./gateway-configs.js";
import { DEFAULT_QR_IMAGE_TEMPLATE, QR_IMAGE_TEMPLATES } from "./gateway-rules.js";

@ObjectType("GatewayConfig", {
  description: "A merchant's account at the hosted gateway. The API secret is write-only.",
})
export class GatewayConfigGql {
  @Field(() => ID) id!: string;
  @Field(() => ID) merchantId!: string;
  @Field() name!: string;
  @Field() upstreamMerchantId!: string;
  @Field({ description: "Sent as qr_image_template, which the gateway's QR API requires" })
  qrImageTemplate!: string;
  @Field() createdAt!: Date;
}

@ObjectType("GatewayQrImageTemplates", {
  description: "The QR image templates the gateway's QR API documents, and the one a configuration gets by default",
})
export class GatewayQrImageTemplatesGql {
  @Field(() => [String]) names!: string[];
  @Field() defaultName!: string;
}

@InputType("GatewayConfigInput")
export class GatewayConfigInputGql {
  @Field(() => ID, { nullable: true }) merchantId?: string;
  @Field({ nullable: true }) name?: string;
  @Field({ nullable: true }) upstreamMerchantId?: string;
  @Field({ nullable: true, description: "Write-only; stored encrypted" }) apiSecret?: string;
  @Field(() => String, {
    nullable: true,
    description: "One of gatewayQrImageTemplates.names; absent on create or null: the default",
  })
  qrImageTemplate?: string | null;
}

const toGatewayGql = (g: GatewayConfig): GatewayConfigGql => ({
  id: g.id,
  merchantId: g.merchantRef,
  name: g.name,
  upstreamMerchantId: g.upstreamMerchantId,
  qrImageTemplate: g.qrImageTemplate,
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

  @Query(() => GatewayQrImageTemplatesGql)
  gatewayQrImageTemplates(@Ctx() ctx: GqlContext): GatewayQrImageTemplatesGql {
    requireAdmin(ctx);
    return { names: [...QR_IMAGE_TEMPLATES], defaultName: DEFAULT_QR_IMAGE_TEMPLATE };
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
        qrImageTemplate: input.qrImageTemplate,
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
