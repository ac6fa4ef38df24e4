import { Arg, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from "type-graphql";
import { requireAdmin, type GqlContext } from "../graphql/context.js";
import type { LinkConfig } from "./link-config.entity.js";
import type { LinkConfigs } from "./link-configs.js";
import { LINK_PROTOCOL_NAMES } from "./link-protocol.js";

@ObjectType("LinkConfig", { description: "A hosted payment-link page; a gateway-link key is bound to one." })
export class LinkConfigGql {
  @Field(() => ID) id!: string;
  @Field(() => ID) merchantId!: string;
  @Field() name!: string;
  @Field() url!: string;
  @Field(() => Int) currency!: number;
  @Field({ description: "The adapter the page is driven with: payway, the one there is" })
  protocol!: string;
  @Field(() => String, {
    nullable: true,
    description: "The adapter this configuration names itself; null when the default decides",
  })
  protocolSetting!: string | null;
  @Field(() => String, {
    nullable: true,
    description:
      "The KHQR account (name@bank) every QR of this link must pay; a QR payable to another is refused. " +
      "Null: the link's next QR records its payee",
  })
  expectedPayee!: string | null;
  @Field(() => String, {
    nullable: true,
    description: "Who set expectedPayee: operator, or first-qr (recorded from the link's first QR: check it)",
  })
  expectedPayeeSource!: string | null;
  @Field() createdAt!: Date;
}

@ObjectType("LinkPageProtocols", {
  description: "The page adapters this service has, and the default one",
})
export class LinkPageProtocolsGql {
  @Field(() => [String]) names!: string[];
  @Field({ description: "The adapter of a configuration that names none" })
  defaultName!: string;
}

@InputType("LinkConfigInput")
export class LinkConfigInputGql {
  @Field(() => ID, { nullable: true }) merchantId?: string;
  @Field({ nullable: true }) name?: string;
  @Field({ nullable: true }) url?: string;
  @Field(() => Int, { nullable: true }) currency?: number;
  @Field(() => String, { nullable: true, description: "payway; null: the default (payway)" })
  protocol?: string | null;
  @Field(() => String, {
    nullable: true,
    description: "The KHQR account (name@bank) every QR must pay; null or empty: the link's next QR records it",
  })
  expectedPayee?: string | null;
}

const toLinkGql = (configs: LinkConfigs, l: LinkConfig): LinkConfigGql => ({
  id: l.id,
  merchantId: l.merchantRef,
  name: l.name,
  url: l.url,
  currency: l.currency,
  protocol: configs.protocolOf(l),
  protocolSetting: l.protocol ?? null,
  expectedPayee: l.expectedPayee ?? null,
  expectedPayeeSource: l.expectedPayeeSource ?? null,
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
    return (await this.configs.list(merchantId)).map((l) => toLinkGql(this.configs, l));
  }

  @Query(() => LinkPageProtocolsGql)
  linkPageProtocols(@Ctx() ctx: GqlContext): LinkPageProtocolsGql {
    requireAdmin(ctx);
    return { names: [...LINK_PROTOCOL_NAMES], defaultName: this.configs.defaultProtocolName };
  }

  @Mutation(() => LinkConfigGql)
  async createLinkConfig(
    @Arg("input", () => LinkConfigInputGql) input: LinkConfigInputGql,
    @Ctx() ctx: GqlContext,
  ): Promise<LinkConfigGql> {
    requireAdmin(ctx);
    return toLinkGql(
      this.configs,
      await this.configs.create({
        merchantId: input.merchantId ?? "",
        name: input.name ?? "",
        url: input.url ?? "",
        currency: input.currency ?? 0,
        protocol: input.protocol,
        expectedPayee: input.expectedPayee,
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
    return toLinkGql(this.configs, await this.configs.update(id, input));
  }
}
