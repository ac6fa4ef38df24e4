import { Arg, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from "type-graphql";
import { requireAdmin, type GqlContext } from "../graphql/context.js";
import type { LinkConfig } from "./link-config.entity.js";
import type { LinkConfigs } from "./link-configs.js";

@ObjectType("LinkConfig", { description: "A hosted payment-link page; a gateway-link key is bound to one." })
export class LinkConfigGql {
  @Field(() => ID) id!: string;
  @Field(() => ID) merchantId!: string;
  @Field() name!: string;
  @Field() url!: string;
  @Field(() => Int) currency!: number;
  @Field() createdAt!: Date;
}

@InputType("LinkConfigInput")
export class LinkConfigInputGql {
  @Field(() => ID, { nullable: true }) merchantId?: string;
  @Field({ nullable: true }) name?: string;
  @Field({ nullable: true }) url?: string;
  @Field(() => Int, { nullable: true }) currency?: number;
}

const toLinkGql = (l: LinkConfig): LinkConfigGql => ({
  id: l.id,
  merchantId: l.merchantRef,
  name: l.name,
  url: l.url,
  currency: l.currency,
  createdAt: l.createdAt,
});

/** Operator API (ADMIN_TOKEN) for payment-link configurations. */
@Resolver()
export class LinkConfigResolver {
  constructor(private readonly configs: LinkConfigs) {}

  @Query(() => [LinkConfigGql])
  async linkConfigs(
    @Arg("merchantId", () => ID, { nullable: true }) merchantId: string | undefined,
    @Ctx() ctx: GqlContext,
  ): Promise<LinkConfigGql[]> {
    requireAdmin(ctx);
    return (await this.configs.list(merchantId)).map(toLinkGql);
  }

  @Mutation(() => LinkConfigGql)
  async createLinkConfig(
    @Arg("input", () => LinkConfigInputGql) input: LinkConfigInputGql,
    @Ctx() ctx: GqlContext,
  ): Promise<LinkConfigGql> {
    requireAdmin(ctx);
    return toLinkGql(
      await this.configs.create({
        merchantId: input.merchantId ?? "",
        name: input.name ?? "",
        url: input.url ?? "",
        currency: input.currency ?? 0,
      }),
    );
  }

  @Mutation(() => LinkConfigGql)
  async updateLinkConfig(
    @Arg("id", () => ID) id: string,
    @Arg("input", () => LinkConfigInputGql) input: LinkConfigInputGql,
    @Ctx() ctx: GqlContext,
  ): Promise<LinkConfigGql> {
    requireAdmin(ctx);
    return toLinkGql(await this.configs.update(id, input));
  }
}
