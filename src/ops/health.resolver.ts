import { Ctx, Field, ObjectType, Query, Resolver } from "type-graphql";
import type { GqlContext } from "../graphql/context.js";

@ObjectType()
export class Viewer {
  @Field({ description: "key, admin, client or anonymous" }) type!: string;
  @Field(() => String, { nullable: true, description: "The key's kind when type is key" }) keyKind!: string | null;
}

@Resolver()
export class HealthResolver {
  @Query(() => Viewer, { description: "Who the current credentials identify" })
  viewer(@Ctx() ctx: GqlContext): Viewer {
    const p = ctx.principal;
    return { type: p.type, keyKind: p.type === "key" ? p.kind : null };
  }
}
