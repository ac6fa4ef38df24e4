import { Arg, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import { requireAdmin, type GqlContext } from "../graphql/context.js";
import type { ApiKey } from "../auth/api-key.entity.js";
import {
  ApiKeyGql,
  ApiKeyInputGql,
  CreatedApiKeyGql,
  MerchantGql,
  MerchantInputGql,
  MerchantRulesGql,
  type KeyKindGql,
} from "./admin.types.js";
import type { AdminService, MerchantInput } from "./admin-service.js";
import { ACCOUNT_TYPES, MERCHANT_FIELD_RULES, MERCHANT_GROUP_RULES } from "./merchant-rules.js";

export const toKeyGql = (k: ApiKey): ApiKeyGql => ({
  id: k.id,
  merchantId: k.merchantRef,
  kind: k.kind as KeyKindGql,
  label: k.label,
  prefix: k.prefix,
  gatewayConfigId: k.gatewayConfigRef,
  linkConfigId: k.linkConfigRef,
  createdAt: k.createdAt,
  lastUsedAt: k.lastUsedAt,
  revokedAt: k.revokedAt,
});

/** Operator API (ADMIN_TOKEN): what the dashboard and `npm run admin` use. */
@Resolver()
export class AdminResolver {
  constructor(private readonly admin: AdminService) {}

  @Query(() => [MerchantGql])
  async merchants(@Ctx() ctx: GqlContext): Promise<MerchantGql[]> {
    requireAdmin(ctx);
    return this.admin.merchants();
  }

  @Query(() => MerchantRulesGql, {
    description: "The rules createMerchant/updateMerchant apply, so forms can show them inline",
  })
  merchantRules(@Ctx() ctx: GqlContext): MerchantRulesGql {
    requireAdmin(ctx);
    return {
      fields: MERCHANT_FIELD_RULES.map((r) => ({ ...r })),
      groups: MERCHANT_GROUP_RULES.map((g) => ({ ...g })),
      accountTypes: [...ACCOUNT_TYPES],
      currencies: [116, 840],
    };
  }

  @Mutation(() => MerchantGql)
  async createMerchant(
    @Arg("input", () => MerchantInputGql) input: MerchantInputGql,
    @Ctx() ctx: GqlContext,
  ): Promise<MerchantGql> {
    requireAdmin(ctx);
    return this.admin.createMerchant(input as MerchantInput);
  }

  @Mutation(() => MerchantGql)
  async updateMerchant(
    @Arg("id", () => ID) id: string,
    @Arg("input", () => MerchantInputGql) input: MerchantInputGql,
    @Ctx() ctx: GqlContext,
  ): Promise<MerchantGql> {
    requireAdmin(ctx);
    return this.admin.updateMerchant(id, input as MerchantInput);
  }

  @Query(() => [ApiKeyGql])
  async apiKeys(
    @Arg("merchantId", () => ID, { nullable: true }) merchantId: string | undefined,
    @Ctx() ctx: GqlContext,
  ): Promise<ApiKeyGql[]> {
    requireAdmin(ctx);
    return (await this.admin.apiKeys(merchantId)).map(toKeyGql);
  }

  @Mutation(() => CreatedApiKeyGql)
  async createApiKey(
    @Arg("input", () => ApiKeyInputGql) input: ApiKeyInputGql,
    @Ctx() ctx: GqlContext,
  ): Promise<CreatedApiKeyGql> {
    requireAdmin(ctx);
    const { key, plain } = await this.admin.createApiKey(input);
    return { apiKey: plain, key: toKeyGql(key) };
  }

  @Mutation(() => ApiKeyGql)
  async revokeApiKey(@Arg("id", () => ID) id: string, @Ctx() ctx: GqlContext): Promise<ApiKeyGql> {
    requireAdmin(ctx);
    return toKeyGql(await this.admin.revokeApiKey(id));
  }
}
