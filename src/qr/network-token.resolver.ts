import { Arg, Ctx, Field, Mutation, ObjectType, Query, Resolver } from "type-graphql";
import { requireAdmin, type GqlContext } from "../graphql/context.js";
import type { NetworkToken, TokenStatus } from "./network-token.js";

@ObjectType("NetworkTokenStatus", {
  description: "The national network API token in use (never the token itself)",
})
export class NetworkTokenStatusGql {
  @Field({ description: "environment (NETWORK_API_TOKEN) or stored (replaced at run time, encrypted)" })
  source!: string;
  @Field(() => Date, { nullable: true, description: "The JWT's exp; null if the token carries none" })
  expiresAt!: Date | null;
  @Field(() => Date, { nullable: true }) updatedAt!: Date | null;
  @Field(() => String, {
    nullable: true,
    description: "Set while the network refuses it, and from 14 days before expiry",
  })
  warning!: string | null;
}

const toGql = ({ source, expiresAt, updatedAt, warning }: TokenStatus): NetworkTokenStatusGql => ({
  source,
  expiresAt,
  updatedAt,
  warning,
});

/** Operator API (ADMIN_TOKEN): the network token's expiry, and its replacement without a restart. */
@Resolver()
export class NetworkTokenResolver {
  constructor(private readonly token: NetworkToken) {}

  @Query(() => NetworkTokenStatusGql)
  networkToken(@Ctx() ctx: GqlContext): NetworkTokenStatusGql {
    requireAdmin(ctx);
    return toGql(this.token.status());
  }

  @Mutation(() => NetworkTokenStatusGql, {
    description: "Replace the network API token: stored encrypted, used by every process at once",
  })
  async setNetworkToken(
    @Arg("token", () => String) token: string,
    @Ctx() ctx: GqlContext,
  ): Promise<NetworkTokenStatusGql> {
    requireAdmin(ctx);
    return toGql(await this.token.replace(token, "operator"));
  }
}
