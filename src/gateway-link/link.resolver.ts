import { Arg, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import { requireKey, type GqlContext } from "../graphql/context.js";
import { LINK_KEY } from "./area.js";
import type { Idempotency } from "../transactions/idempotency.js";
import type { LinkService } from "./link-service.js";
import { GatewayLinkTransactionGql, GenerateGatewayLinkQrInput } from "./link.types.js";

/** Gateway-link area (x-auth-type api-gateway-link). */
@Resolver()
export class LinkResolver {
  constructor(
    private readonly link: LinkService,
    private readonly idempotency: Idempotency,
  ) {}

  @Mutation(() => GatewayLinkTransactionGql, {
    description: "Obtain a KHQR from the key's payment-link page; expires exactly 180 s after issue",
  })
  async generateGatewayLinkQr(
    @Arg("input", () => GenerateGatewayLinkQrInput) input: GenerateGatewayLinkQrInput,
    @Ctx() ctx: GqlContext,
  ): Promise<GatewayLinkTransactionGql> {
    const key = requireKey(ctx, LINK_KEY);
    return this.idempotency.run(
      key,
      ctx.idempotencyKey,
      "generateGatewayLinkQr",
      input,
      () => this.link.generate(key, input),
      (id) => this.link.replay(key, id),
    );
  }

  @Query(() => GatewayLinkTransactionGql, {
    description: "Local state only: never contacts the gateway or opens a browser",
  })
  async gatewayLinkTransaction(
    @Arg("transactionId", () => ID) transactionId: string,
    @Ctx() ctx: GqlContext,
  ): Promise<GatewayLinkTransactionGql> {
    return this.link.check(requireKey(ctx, LINK_KEY), transactionId);
  }
}
