import { Field, Float, ID, InputType, Int, ObjectType } from "type-graphql";
import { areaStatusEnum } from "../transactions/transaction.types.js";
import { GraphQLJSONObject } from "graphql-scalars";
import {
  amountWhen,
  Bounds,
  CURRENCY_NUMBERS,
  ExactAmount,
  FieldRule,
  JsonObject,
  Text,
  TypeMessage,
} from "../validation/rules.js";
import type { PayerField } from "./link-protocol.js";
import { ReturnUrlField } from "../validation/return-url.js";

/** Every gateway-link QR expires exactly this long after issue (the contract's fixed 180 s). */
export const LINK_LIFETIME_MS = 180_000;

interface PayerRule {
  max: number;
  pattern?: RegExp;
  message?: string;
}

/** The generate request's optional fields for a payment link that asks for more than the amount (payer-fields). */
export const PAYER_RULES: Record<PayerField, PayerRule> = {
  remark: { max: 255 },
  payerName: { max: 100 },
  payerEmail: {
    max: 100,
    pattern: /^[^@\s]+@[^@\s]+\.[^@\s]+$/,
    message: "must be an e-mail address (name@domain.tld)",
  },
  payerPhone: {
    max: 16,
    pattern: /^\+?[0-9]{8,15}$/,
    message: "must be 8 to 15 digits, optionally after one '+', without spaces or punctuation",
  },
};

/**
 * One of those fields: its GraphQL field, its rule (the same rule writes the contract's maxLength and pattern). They
 * go to the page only; the transaction records which were sent, never their values
 * (docs/decisions/0201-what-a-link-asks-beyond-an-amount.md).
 */
function PayerText(rule: PayerRule, what: string): PropertyDecorator {
  return (target, property) => {
    Field(() => String, {
      nullable: true,
      description:
        `Optional: ${what}, at most ${rule.max} characters, for a payment link that asks for it (sent to the ` +
        "page; neither stored nor echoed). A link that requires it answers 400 without it",
    })(target, property);
    Text({ max: rule.max, ...(rule.pattern ? { pattern: rule.pattern, patternMessage: rule.message } : {}) })(
      target,
      property,
    );
  };
}

@InputType("GenerateGatewayLinkQrInput", { description: "The link URL is fixed by the API key; it cannot be sent" })
@Bounds({ allOf: [amountWhen(116, { multipleOf: 1 })] })
export class GenerateGatewayLinkQrInput {
  // The currency must equal the key's configuration, which only the service knows: it checks that, and the
  // amount's precision for that currency, after these rules.
  @Field(() => Float, { description: "Greater than 0; USD at most 2 decimals, KHR whole" })
  @ExactAmount<GenerateGatewayLinkQrInput>({ decimals: (i) => (i.currency === 116 ? 0 : 2) })
  amount!: number;

  // The service refuses any other than the key's configured currency, itself one of CURRENCY_NUMBERS (its rule): the
  // contract lists those, and says the rest.
  @Field(() => Int, { description: "Must equal the key's configured currency: 116 (KHR) or 840 (USD)" })
  @Bounds({ enum: [...CURRENCY_NUMBERS] })
  @TypeMessage("must be 116 (KHR) or 840 (USD), as a number: the key's configured currency")
  currency!: number;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "Optional; echoed in requestData and webhooks" })
  @JsonObject()
  meta?: Record<string, unknown>;

  @ReturnUrlField() returnUrl?: string;

  @PayerText(PAYER_RULES.remark, "a remark")
  remark?: string;

  @PayerText(PAYER_RULES.payerName, "the payer's full name")
  payerName?: string;

  @PayerText(PAYER_RULES.payerEmail, "the payer's e-mail address")
  payerEmail?: string;

  @PayerText(PAYER_RULES.payerPhone, "the payer's phone number")
  payerPhone?: string;

  @Field(() => Float, { nullable: true, description: "Legacy: absent or exactly 180000" })
  @Bounds({ enum: [LINK_LIFETIME_MS] })
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

/** A gateway-link payment's status: PENDING for its 180 s, then SUCCESS, EXPIRED or FAILED. */
const GatewayLinkStatusGql = areaStatusEnum(
  "GatewayLinkStatus",
  "A gateway-link payment's status: PENDING until paid (SUCCESS), expired or failed",
  ["PENDING", "SUCCESS", "EXPIRED", "FAILED"],
);

@ObjectType("GatewayLinkTransaction")
export class GatewayLinkTransactionGql {
  @Field(() => ID) transactionId!: string;
  @Field({ description: "Exactly 180 s after issue" }) expiredAt!: string;
  @Field(() => GatewayLinkStatusGql, { description: "PENDING, SUCCESS, EXPIRED or FAILED" }) status!: string;
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
