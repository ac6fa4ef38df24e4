import { Field, Float, ID, InputType, Int, ObjectType } from "type-graphql";
import { areaStatusEnum } from "../transactions/transaction.types.js";
import { GraphQLJSONObject } from "graphql-scalars";
import { formatKhqrAmount, KHQR_MAX } from "../khqr/index.js";
import { amountWhen, Bounds, ExactAmount, JsonObject, OneOf, patterned, WholeNumber } from "../validation/rules.js";
import { ReturnUrlField } from "../validation/return-url.js";

/** What /qr/check looks a QR up by: its md5, 32 hex characters in either case (the check and the contract's pattern). */
export const MD5 = patterned("must be 32 hex characters", /^[0-9a-fA-F]{32}$/);

export const EXPIRED_AFTER_MIN = 10_000;
export const EXPIRED_AFTER_MAX = 86_400_000;

const isCurrency = (c: unknown): c is 840 | 116 => c === 840 || c === 116;

/** The largest amount a KHQR's amount field holds: 13 characters (USD with decimals holds less: 9 999 999 999.99). */
const KHQR_AMOUNT_MAX = 10 ** KHQR_MAX.AMOUNT - 1;

@InputType("GenerateQrInput")
@Bounds({ allOf: [amountWhen(116, { multipleOf: 1 })] })
export class GenerateQrInput {
  @Field(() => Int, { description: "840 = USD, 116 = KHR (the numbers, not the letters)" })
  @OneOf([840, 116], "must be 840 (USD) or 116 (KHR), as a number")
  currency!: 840 | 116;

  @Field(() => Float, {
    description: "Greater than 0; USD at most 2 decimals, KHR whole; at most 13 characters as the QR writes it",
  })
  @Bounds({ maximum: KHQR_AMOUNT_MAX })
  @ExactAmount<GenerateQrInput>({
    decimals: (i) => (i.currency === 116 ? 0 : 2),
    // The QR's amount field holds at most 13 characters (KHR 9 999 999 999 999, USD 9 999 999 999.99).
    more: (amount, i) =>
      isCurrency(i.currency) && formatKhqrAmount(amount, i.currency) === null
        ? "is too large for a KHQR (at most 13 characters)"
        : null,
  })
  amount!: number;

  @Field(() => Float, { description: "Milliseconds until expiry (10 000 to 86 400 000)" })
  @WholeNumber(
    EXPIRED_AFTER_MIN,
    EXPIRED_AFTER_MAX,
    `must be a whole number of milliseconds from ${EXPIRED_AFTER_MIN} to ${EXPIRED_AFTER_MAX}`,
  )
  expiredAfter!: number;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "Returned unchanged, and in webhooks (≤ 4 KiB)" })
  @JsonObject()
  meta?: Record<string, unknown>;

  @ReturnUrlField() returnUrl?: string;
}

@ObjectType("QrRequestData")
export class QrRequestDataGql {
  @Field(() => Float) amount!: number;
  @Field(() => Int) currency!: number;
  @Field(() => Float) expiredAfter!: number;
  @Field(() => GraphQLJSONObject) meta!: Record<string, unknown>;
}

@ObjectType("QrData")
export class QrDataGql {
  @Field() qr!: string;
  @Field({ description: "md5 hex of qr: the key for status checks" }) md5!: string;
}

/** A generic KHQR payment's status: PENDING until the network reports it paid (SUCCESS), or it expires or fails. */
const QrStatusGql = areaStatusEnum(
  "QrStatus",
  "A generic KHQR payment's status: PENDING until paid (SUCCESS), expired or failed",
  ["PENDING", "SUCCESS", "EXPIRED", "FAILED"],
);

@ObjectType("QrTransaction", { description: "A generic KHQR transaction" })
export class QrTransactionGql {
  @Field(() => ID) transactionId!: string;
  @Field() expiredAt!: string;
  @Field(() => QrStatusGql, { description: "PENDING, SUCCESS, EXPIRED or FAILED" }) status!: string;
  @Field(() => QrRequestDataGql) requestData!: QrRequestDataGql;
  @Field(() => QrDataGql) data!: QrDataGql;
  @Field(() => String, {
    nullable: true,
    description: "Read-only token a browser may use to subscribe to this one transaction (generate only)",
  })
  clientToken?: string;
  @Field(() => String, {
    nullable: true,
    description: "The hosted checkout page of this transaction, authorised by the clientToken (generate only)",
  })
  checkoutUrl?: string;
  @Field(() => String, {
    nullable: true,
    description:
      "generate only, for a merchant with deeplink settings: a short link opening a banking app. Null in GraphQL and " +
      "absent from the REST answer when the merchant has no deeplink settings or the network gave none in time",
  })
  deeplink?: string | null;
}

@ObjectType("DecodeStatus")
export class DecodeStatusGql {
  @Field(() => Int, { description: "0 on success, non-zero on parse failure" }) code!: number;
  @Field(() => Int, { nullable: true }) errorCode!: number | null;
  @Field(() => String, { nullable: true }) message!: string | null;
}

@ObjectType("DecodeResult")
export class DecodeResultGql {
  @Field(() => DecodeStatusGql) status!: DecodeStatusGql;
  @Field(() => GraphQLJSONObject, { description: "Decoded fields (all strings); empty or partial on failure" })
  data!: Record<string, unknown>;
}
