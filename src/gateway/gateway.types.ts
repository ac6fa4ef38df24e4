import { Field, Float, ID, InputType, Int, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "graphql-scalars";
import { ExactAmount, FieldRule, JsonObject, Nested, Text, WholeNumber } from "../validation/rules.js";
import { ReturnUrlField } from "../validation/return-url.js";
import { storableText, UNSTORABLE } from "../validation/storable.js";
import { GatewayStatusGql } from "../transactions/transaction.types.js";

export const LIFETIME_MIN = 3;
export const LIFETIME_MAX = 172_800;
export const LIFETIME_DEFAULT = 6;
/** The gateway takes the items as base64 JSON of at most this many characters. */
const ITEMS_ENCODED_MAX = 500;

const upper = (c: unknown) => (typeof c === "string" ? c.toUpperCase() : null);

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
  @Field({ description: "Unique per merchant, at most 20 characters; sent upstream as tran_id" })
  @Text({
    max: 20,
    required: true,
    pattern: /^[A-Za-z0-9._-]+$/,
    patternMessage: "may contain only letters, digits, '.', '_' and '-'",
    storable: false,
  })
  orderId!: string;

  @Field({ description: "USD or KHR" })
  @FieldRule<GatewayQrDataInput>("gatewayCurrency", (v) =>
    upper(v) === "USD" || upper(v) === "KHR" ? null : "must be USD or KHR",
  )
  currency!: string;

  @Field(() => Float, { description: "USD ≥ 0.01 (2 decimals), KHR ≥ 100 (whole)" })
  @ExactAmount<GatewayQrDataInput>({
    decimals: (d) => (upper(d.currency) === "KHR" ? 0 : 2),
    more: (amount, d) => {
      if (upper(d.currency) === "USD" && Number(amount) < 0.01) return "must be at least 0.01 USD";
      if (upper(d.currency) === "KHR" && Number(amount) < 100) return "must be at least 100 KHR";
      return null;
    },
  })
  amount!: number;

  @Field({ nullable: true }) @Text({ max: 20 }) firstName?: string;
  @Field({ nullable: true }) @Text({ max: 20 }) lastName?: string;
  @Field({ nullable: true }) @Text({ max: 50, pattern: /^[^@\s]+@[^@\s]+\.[^@\s]+$/ }) email?: string;
  @Field({ nullable: true }) @Text({ max: 20, pattern: /^\+?[0-9 ()-]{6,20}$/ }) phone?: string;
  @Field({ nullable: true }) @Text({ max: 20, pattern: /^[A-Za-z0-9_-]+$/ }) qrImageTemplate?: string;

  @Field(() => [GatewayItemInput], { nullable: true })
  @Nested()
  @FieldRule<GatewayQrDataInput>("gatewayItems", (v) => {
    if (v === undefined || v === null) return null;
    if (!Array.isArray(v)) return "must be an array";
    if (v.length > 10) return "must have at most 10 items";
    const encoded = Buffer.from(JSON.stringify(gatewayItems(v as GatewayItemInput[]))).toString("base64");
    return encoded.length > ITEMS_ENCODED_MAX
      ? `are too long for the gateway (${ITEMS_ENCODED_MAX} characters encoded)`
      : null;
  })
  items?: GatewayItemInput[];

  @Field(() => Int, { nullable: true, description: "Minutes, 3 to 172800; default 6" })
  @WholeNumber(
    LIFETIME_MIN,
    LIFETIME_MAX,
    `must be a whole number of minutes from ${LIFETIME_MIN} to ${LIFETIME_MAX}`,
    true,
  )
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
