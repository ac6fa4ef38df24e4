import { Arg, Ctx, ID, Mutation, Query, Resolver } from "type-graphql";
import { requireKey, type GqlContext } from "../graphql/context.js";
import { GATEWAY_KEY } from "./area.js";
import type { Idempotency } from "../transactions/idempotency.js";
import type { GatewayService } from "./gateway-service.js";
import { GatewayQrGql, GatewayTransactionStatusGql, GenerateGatewayQrInput } from "./gateway.types.js";

/** Hosted gateway area (x-auth-type api-gateway). */
@Resolver()
export class GatewayResolver {
  constructor(
    private readonly gateway: GatewayService,
    private readonly idempotency: Idempotency,
  ) {}

  @Mutation(() => GatewayQrGql, { description: "Issue a dynamic QR through the hosted gateway (status CHECKOUT)" })
  async generateGatewayQr(
    @Arg("input", () => GenerateGatewayQrInput) input: GenerateGatewayQrInput,
    @Ctx() ctx: GqlContext,
  ): Promise<GatewayQrGql> {
    const key = requireKey(ctx, GATEWAY_KEY);
    return this.idempotency.run(
      key,
      ctx.idempotencyKey,
      "generateGatewayQr",
      input,
      () => this.gateway.generate(key, input),
      (id) => this.gateway.replay(key, id),
    );
  }

  @Query(() => GatewayTransactionStatusGql, {
    description: "One of this key's gateway transactions, by transactionId or orderId (exactly one)",
  })
  async gatewayTransaction(
    @Arg("transactionId", () => ID, { nullable: true }) transactionId: string | undefined,
    @Arg("orderId", () => String, { nullable: true }) orderId: string | undefined,
    @Ctx() ctx: GqlContext,
  ): Promise<GatewayTransactionStatusGql> {
    return this.gateway.status(requireKey(ctx, GATEWAY_KEY), { transactionId, orderId });
  }
}
