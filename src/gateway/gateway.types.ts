import { Field, Float, ID, InputType, Int, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "graphql-scalars";
import { Bounds, ExactAmount, FieldRule, JsonObject, Nested, Text, WholeNumber } from "../validation/rules.js";
import { ReturnUrlField } from "../validation/return-url.js";
import { storableText, UNSTORABLE } from "../validation/storable.js";
import {
  EMAIL,
  isQrImageTemplate,
  itemsProblem,
  ITEMS_MAX,
  LIFETIME_MAX,
  LIFETIME_MESSAGE,
  LIFETIME_MIN,
  MIN_AMOUNT,
  NAME,
  PHONE,
  QR_IMAGE_TEMPLATE_MESSAGE,
  QR_IMAGE_TEMPLATES,
  TRAN_ID,
  type TextRule,
} from "./gateway-rules.js";
import { compareDecimals, CURRENCY_DECIMALS } from "../money/money.js";

export { LIFETIME_MAX, LIFETIME_MIN } from "./gateway-rules.js";
export const LIFETIME_DEFAULT = 6;

/**
 * A customer or order field the gateway's pages constrain (gateway-rules.ts): the same rule checks the value and
 * writes the contract's maxLength and pattern.
 */
function GatewayText(rule: TextRule, required = false): PropertyDecorator {
  return (target, property) => {
    Text({ max: rule.max, required, pattern: rule.pattern, patternMessage: rule.message })(target, property);
    Bounds({ ...(required ? { minLength: 1 } : {}), maxLength: rule.max, pattern: rule.pattern.source })(
      target,
      property,
    );
  };
}

const upper = (c: unknown) => (typeof c === "string" ? c.toUpperCase() : null);

/** The hosted gateway's own status words (its `status` object): an area field of its transactions too (area.ts). */
@ObjectType("GatewayStatus")
export class GatewayStatusGql {
  @Field() code!: string;
  @Field() message!: string;
}

@InputType("GatewayItemInput")
export class GatewayItemInput {
  @Field()
  @FieldRule<GatewayItemInput>("itemName", (v) =>
    typeof v !== "string" || v.length === 0 || v.length > 100
      ? "must be a string of 1 to 100 characters"
      : storableText(v)
        ? null
        : UNSTORABLE,
  )
  name!: string;

  @Field(() => Float)
  @FieldRule<GatewayItemInput>("itemQuantity", (v) =>
    typeof v === "number" && Number.isInteger(v) && v >= 1 ? null : "must be a whole number ≥ 1",
  )
  quantity!: number;

  @Field(() => Float)
  @FieldRule<GatewayItemInput>("itemPrice", (v) =>
    typeof v === "number" && Number.isFinite(v) && v >= 0 ? null : "must be a number ≥ 0",
  )
  price!: number;
}

/** The items as the gateway receives them (name, quantity, price), for the encoded-length rule. */
export function gatewayItems(items: readonly GatewayItemInput[]): { name: string; quantity: number; price: number }[] {
  return items.map((o) => ({ name: String(o.name), quantity: Number(o.quantity), price: Number(o.price) }));
}

@InputType("GatewayQrDataInput")
export class GatewayQrDataInput {
  @Field({
    description: "Unique per merchant: 1 to 20 letters A-Z/a-z, digits and '-'; sent upstream as tran_id",
  })
  @GatewayText(TRAN_ID, true)
  orderId!: string;

  @Field({ description: "USD or KHR" })
  @FieldRule<GatewayQrDataInput>("gatewayCurrency", (v) =>
    upper(v) === "USD" || upper(v) === "KHR" ? null : "must be USD or KHR",
  )
  currency!: string;

  @Field(() => Float, { description: "USD ≥ 0.01 (2 decimals), KHR ≥ 100 (whole)" })
  @ExactAmount<GatewayQrDataInput>({
    decimals: (d) => CURRENCY_DECIMALS[upper(d.currency) === "KHR" ? "KHR" : "USD"],
    more: (amount, d) => {
      const currency = upper(d.currency);
      if (currency !== "USD" && currency !== "KHR") return null;
      return compareDecimals(amount, MIN_AMOUNT[currency]) < 0
        ? `must be at least ${MIN_AMOUNT[currency]} ${currency}`
        : null;
    },
  })
  amount!: number;

  @Field({ nullable: true, description: "Letters (any script) and single spaces, at most 20" })
  @GatewayText(NAME)
  firstName?: string;

  @Field({ nullable: true, description: "Letters (any script) and single spaces, at most 20" })
  @GatewayText(NAME)
  lastName?: string;

  @Field({ nullable: true, description: "At most 50 characters" }) @GatewayText(EMAIL) email?: string;

  @Field({ nullable: true, description: "8 to 20 digits, optionally after one '+'" })
  @GatewayText(PHONE)
  phone?: string;

  @Field({
    nullable: true,
    description: "One of the gateway's QR image templates; default: the gateway configuration's",
  })
  @FieldRule<GatewayQrDataInput>("qrImageTemplate", (v) =>
    v === undefined || v === null || isQrImageTemplate(v) ? null : QR_IMAGE_TEMPLATE_MESSAGE,
  )
  @Bounds({ enum: [...QR_IMAGE_TEMPLATES] })
  qrImageTemplate?: string;

  @Field(() => [GatewayItemInput], {
    nullable: true,
    description: "At most 10, and at most 500 characters as the gateway receives them (base64 of the JSON list)",
  })
  @Nested()
  @FieldRule<GatewayQrDataInput>("gatewayItems", (v) => {
    if (v === undefined || v === null) return null;
    if (!Array.isArray(v)) return "must be an array";
    return itemsProblem(gatewayItems(v as GatewayItemInput[]));
  })
  @Bounds({ maxItems: ITEMS_MAX })
  items?: GatewayItemInput[];

  @Field(() => Int, {
    nullable: true,
    description: `Minutes, ${LIFETIME_MIN} to ${LIFETIME_MAX} (the gateway's 30 days); default ${LIFETIME_DEFAULT}`,
  })
  @WholeNumber(LIFETIME_MIN, LIFETIME_MAX, LIFETIME_MESSAGE, true)
  @Bounds({ minimum: LIFETIME_MIN, maximum: LIFETIME_MAX })
  lifetime?: number;
}

@InputType("GenerateGatewayQrInput")
export class GenerateGatewayQrInput {
  @Field(() => GatewayQrDataInput) @Nested() qrData!: GatewayQrDataInput;
  @Field(() => GraphQLJSONObject, { nullable: true }) @JsonObject() metaData?: Record<string, unknown>;

  @ReturnUrlField() returnUrl?: string;
}

@ObjectType("GatewayQr", { description: "A hosted gateway QR as issued (status CHECKOUT)" })
export class GatewayQrGql {
  @Field(() => ID) transactionId!: string;
  @Field() orderId!: string;
  @Field() qrString!: string;
  @Field({ description: "PNG data URL" }) qrImage!: string;
  @Field() deeplink!: string;
  @Field() appStore!: string;
  @Field() playStore!: string;
  @Field(() => Float) amount!: number;
  @Field() currency!: string;
  @Field() status!: string;
  @Field(() => GatewayStatusGql) gatewayStatus!: GatewayStatusGql;
  @Field() expiresAt!: string;
  @Field(() => String, { nullable: true }) clientToken?: string;
  @Field(() => String, { nullable: true, description: "The hosted checkout page, authorised by the clientToken" })
  checkoutUrl?: string;
}

@ObjectType("GatewayTransactionStatus")
export class GatewayTransactionStatusGql {
  @Field(() => ID) transactionId!: string;
  @Field() orderId!: string;
  @Field({ description: "CHECKOUT, SUCCESS, FAILED or EXPIRED" }) status!: string;
  @Field({ description: "Two decimals, as text" }) amount!: string;
  @Field() currency!: string;
  @Field() expiredAt!: string;
  @Field() createdAt!: string;
  @Field(() => GatewayStatusGql, { nullable: true }) gatewayStatus?: GatewayStatusGql;
}
