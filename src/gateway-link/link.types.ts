import { Field, Float, ID, InputType, Int, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "graphql-scalars";
import { ExactAmount, FieldRule, JsonObject } from "../validation/rules.js";
import { ReturnUrlField } from "../validation/return-url.js";

/** Every gateway-link QR expires exactly this long after issue (the contract's fixed 180 s). */
export const LINK_LIFETIME_MS = 180_000;

@InputType("GenerateGatewayLinkQrInput", { description: "The link URL is fixed by the API key; it cannot be sent" })
export class GenerateGatewayLinkQrInput {
  // The currency must equal the key's configuration, which only the service knows: it checks that, and the
  // amount's precision for that currency, after these rules.
  @Field(() => Float, { description: "Greater than 0; USD at most 2 decimals, KHR whole" })
  @ExactAmount<GenerateGatewayLinkQrInput>({ decimals: (i) => (i.currency === 116 ? 0 : 2) })
  amount!: number;

  @Field(() => Int, { description: "Must equal the key's configured currency: 116 (KHR) or 840 (USD)" })
  currency!: number;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "Optional; echoed in requestData and webhooks" })
  @JsonObject()
  meta?: Record<string, unknown>;

  @ReturnUrlField() returnUrl?: string;

  @Field(() => Float, { nullable: true, description: "Legacy: absent or exactly 180000" })
  @FieldRule<GenerateGatewayLinkQrInput>("fixedLifetime", (v) =>
    v === undefined || v === null || v === LINK_LIFETIME_MS
      ? null
      : `is fixed: omit it or send exactly ${LINK_LIFETIME_MS}`,
  )
  expiredAfter?: number;
}

@ObjectType("GatewayLinkRequestData")
export class GatewayLinkRequestDataGql {
  @Field(() => Float) amount!: number;
  @Field(() => Int) currency!: number;
  @Field(() => GraphQLJSONObject) meta!: Record<string, unknown>;
}

@ObjectType("GatewayLinkData")
export class GatewayLinkDataGql {
  @Field() qr!: string;
  @Field({ description: "Client identifier supplied by the payment page" }) clientId!: string;
}

@ObjectType("GatewayLinkTransaction")
export class GatewayLinkTransactionGql {
  @Field(() => ID) transactionId!: string;
  @Field({ description: "Exactly 180 s after issue" }) expiredAt!: string;
  @Field({ description: "PENDING, SUCCESS, EXPIRED or FAILED" }) status!: string;
  @Field(() => GatewayLinkRequestDataGql) requestData!: GatewayLinkRequestDataGql;
  @Field(() => GatewayLinkDataGql) data!: GatewayLinkDataGql;
  @Field(() => String, {
    nullable: true,
    description: "Opens the payer's banking app on this QR (a PayWay link: abamobilebank://…)",
  })
  deeplink?: string;
  @Field(() => String, { nullable: true, description: "On SUCCESS, when the gateway provides one" })
  receiptUrl?: string;
  @Field(() => Boolean, { nullable: true, description: "True once the payer's app has scanned the QR" })
  scanned?: boolean;
  @Field(() => String, {
    nullable: true,
    description:
      "FAILED only: why, e.g. the page's refusal with its code and message, or the network error that kept it unreachable",
  })
  failureReason?: string;
  @Field(() => String, { nullable: true, description: "generate only" }) clientToken?: string;
  @Field(() => String, {
    nullable: true,
    description: "The hosted checkout page, authorised by the clientToken (generate only)",
  })
  checkoutUrl?: string;
}
