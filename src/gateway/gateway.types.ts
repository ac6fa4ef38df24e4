import { Field, Float, ID, InputType, Int, ObjectType } from "type-graphql";
import { areaStatusEnum } from "../transactions/transaction.types.js";
import { GraphQLJSONObject } from "graphql-scalars";
import {
  Bounds,
  ExactAmount,
  FieldRule,
  JsonObject,
  Nested,
  Text,
  TypeMessage,
  WholeNumber,
} from "../validation/rules.js";
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
  return Text({ max: rule.max, required, pattern: rule.pattern, patternMessage: rule.message });
}

const upper = (c: unknown) => (typeof c === "string" ? c.toUpperCase() : null);
/** The gateway's currencies, as the contract lists them (any letter case is read as these: `usd` is USD). */
export const GATEWAY_CURRENCIES = ["USD", "KHR"] as const;
const ITEM_NAME_MAX = 100;

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
    typeof v !== "string" || v.length === 0 || v.length > ITEM_NAME_MAX
      ? `must be a string of 1 to ${ITEM_NAME_MAX} characters`
      : storableText(v)
        ? null
        : UNSTORABLE,
  )
  @Bounds({ minLength: 1, maxLength: ITEM_NAME_MAX })
  name!: string;

  @Field(() => Float)
  @FieldRule<GatewayItemInput>("itemQuantity", (v) =>
    typeof v === "number" && Number.isInteger(v) && v >= 1 ? null : "must be a whole number ≥ 1",
  )
  @Bounds({ type: "integer", minimum: 1 })
  quantity!: number;

  @Field(() => Float)
  @FieldRule<GatewayItemInput>("itemPrice", (v) =>
    typeof v === "number" && Number.isFinite(v) && v >= 0 ? null : "must be a number ≥ 0",
  )
  @Bounds({ minimum: 0 })
  price!: number;
}

/** The items as the gateway receives them (name, quantity, price), for the encoded-length rule. */
export function gatewayItems(items: readonly GatewayItemInput[]): { name: string; quantity: number; price: number }[] {
  return items.map((o) => ({ name: String(o.name), quantity: Number(o.quantity), price: Number(o.price) }));
}

/** A KHR amount is whole and at least the gateway's KHR minimum (the amount's rule below): said to the contract too. */
@InputType("GatewayQrDataInput")
@Bounds({
  allOf: [
    {
      if: { properties: { currency: { const: "KHR" } }, required: ["currency"] },
      then: { properties: { amount: { minimum: Number(MIN_AMOUNT.KHR), multipleOf: 10 ** -CURRENCY_DECIMALS.KHR } } },
    },
  ],
})
export class GatewayQrDataInput {
  @Field({
    description: "Unique per merchant: 1 to 20 letters A-Z/a-z, digits and '-'; sent upstream as tran_id",
  })
  @GatewayText(TRAN_ID, true)
  orderId!: string;

  @Field({ description: "USD or KHR (another letter case is read as these: usd is USD)" })
  @FieldRule<GatewayQrDataInput>("gatewayCurrency", (v) =>
    GATEWAY_CURRENCIES.some((c) => c === upper(v)) ? null : `must be ${GATEWAY_CURRENCIES.join(" or ")}`,
  )
  @Bounds({ enum: [...GATEWAY_CURRENCIES] })
  @TypeMessage(`must be ${GATEWAY_CURRENCIES.join(" or ")}`)
  currency!: string;

  @Field(() => Float, { description: "USD ≥ 0.01 (2 decimals), KHR ≥ 100 (whole)" })
  @ExactAmount<GatewayQrDataInput>({
    minimum: Math.min(Number(MIN_AMOUNT.USD), Number(MIN_AMOUNT.KHR)),
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
  lifetime?: number;
}

@InputType("GenerateGatewayQrInput")
export class GenerateGatewayQrInput {
  @Field(() => GatewayQrDataInput) @Nested() qrData!: GatewayQrDataInput;
  @Field(() => GraphQLJSONObject, { nullable: true }) @JsonObject() metaData?: Record<string, unknown>;

  @ReturnUrlField() returnUrl?: string;
}

/** A hosted gateway payment's status: issued (CHECKOUT), then SUCCESS, FAILED or EXPIRED. */
const GatewayQrStatusGql = areaStatusEnum(
  "GatewayQrStatus",
  "A hosted gateway payment's status: CHECKOUT until paid, failed or expired",
  ["CHECKOUT", "SUCCESS", "FAILED", "EXPIRED"],
);

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
  @Field(() => GatewayQrStatusGql, { description: "CHECKOUT as issued (a replay answers the status now)" })
  status!: string;
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
  @Field(() => GatewayQrStatusGql, { description: "CHECKOUT, SUCCESS, FAILED or EXPIRED" }) status!: string;
  @Field({ description: "Two decimals, as text" }) amount!: string;
  @Field() currency!: string;
  @Field() expiredAt!: string;
  @Field() createdAt!: string;
  @Field(() => GatewayStatusGql, { nullable: true }) gatewayStatus?: GatewayStatusGql;
}
