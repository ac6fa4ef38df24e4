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
} from "./admin.types.js";
import type { AdminService, MerchantInput } from "./admin-service.js";
import { ACCOUNT_TYPES, MERCHANT_FIELD_RULES, MERCHANT_GROUP_RULES } from "./merchant-rules.js";

/** `targetField`: the contract's field naming what a key of this kind is bound to (its area declares it). */
export const toKeyGql = (k: ApiKey, targetField: string | null): ApiKeyGql => ({
  // The other areas' target fields are left out: GraphQL answers null for them.
  ...(targetField === null ? {} : { [targetField]: k.targetRef }),
  id: k.id,
  merchantId: k.merchantRef,
  kind: k.kind,
  label: k.label,
  prefix: k.prefix,
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
    return (await this.admin.apiKeys(merchantId)).map((k) => toKeyGql(k, this.admin.targetField(k.kind)));
  }

  @Mutation(() => CreatedApiKeyGql)
  async createApiKey(
    @Arg("input", () => ApiKeyInputGql) input: ApiKeyInputGql,
    @Ctx() ctx: GqlContext,
  ): Promise<CreatedApiKeyGql> {
    requireAdmin(ctx);
    const { key, plain } = await this.admin.createApiKey({ ...input });
    return { apiKey: plain, key: toKeyGql(key, this.admin.targetField(key.kind)) };
  }

  @Mutation(() => ApiKeyGql)
  async revokeApiKey(@Arg("id", () => ID) id: string, @Ctx() ctx: GqlContext): Promise<ApiKeyGql> {
    requireAdmin(ctx);
    const key = await this.admin.revokeApiKey(id);
    return toKeyGql(key, this.admin.targetField(key.kind));
  }
}
