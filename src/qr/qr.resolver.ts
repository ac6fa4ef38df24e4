import { Arg, Ctx, Mutation, Query, Resolver } from "type-graphql";
import { requireKey, type GqlContext } from "../graphql/context.js";
import { QR_KEY } from "./area.js";
import type { Idempotency } from "../transactions/idempotency.js";
import type { QrService } from "./qr-service.js";
import { DecodeResultGql, GenerateQrInput, QrTransactionGql } from "./qr.types.js";

/** Generic QR area (x-auth-type api-key). */
@Resolver()
export class QrResolver {
  constructor(
    private readonly qr: QrService,
    private readonly idempotency: Idempotency,
  ) {}

  @Mutation(() => QrTransactionGql, { description: "Issue a dynamic KHQR for the key's merchant (status PENDING)" })
  async generateQr(
    @Arg("input", () => GenerateQrInput) input: GenerateQrInput,
    @Ctx() ctx: GqlContext,
  ): Promise<QrTransactionGql> {
    const key = requireKey(ctx, QR_KEY);
    return this.idempotency.run(
      key,
      ctx.idempotencyKey,
      "generateQr",
      input,
      () => this.qr.generate(key, input),
      (id) => this.qr.replay(key, id),
    );
  }

  @Query(() => QrTransactionGql, { description: "A generic QR transaction of this key, by md5" })
  async qrTransaction(@Arg("md5", () => String) md5: string, @Ctx() ctx: GqlContext): Promise<QrTransactionGql> {
    return this.qr.check(requireKey(ctx, QR_KEY), md5);
  }

  @Query(() => Boolean, { description: "True when the string is a valid, unexpired KHQR" })
  verifyQr(@Arg("qrData", () => String) qrData: string, @Ctx() ctx: GqlContext): boolean {
    requireKey(ctx, QR_KEY);
    return this.qr.verify(qrData);
  }

  @Query(() => DecodeResultGql, { description: "Decode a KHQR; parse failures are reported in status" })
  decodeQr(@Arg("qrData", () => String) qrData: string, @Ctx() ctx: GqlContext): DecodeResultGql {
    requireKey(ctx, QR_KEY);
    return this.qr.decode(qrData) as unknown as DecodeResultGql;
  }
}
