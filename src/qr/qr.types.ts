import { Field, Float, ID, InputType, Int, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "graphql-scalars";

@InputType("GenerateQrInput")
export class GenerateQrInput {
  @Field(() => Float, { description: "Greater than 0; USD at most 2 decimals, KHR whole" }) amount!: number;
  @Field(() => Int, { description: "840 = USD, 116 = KHR" }) currency!: number;
  @Field(() => Float, { description: "Milliseconds until expiry (10 000 to 86 400 000)" }) expiredAfter!: number;
  @Field(() => GraphQLJSONObject, { nullable: true, description: "Returned unchanged, and in webhooks (≤ 4 KiB)" })
  meta?: Record<string, unknown>;
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

@ObjectType("QrTransaction", { description: "A generic KHQR transaction" })
export class QrTransactionGql {
  @Field(() => ID) transactionId!: string;
  @Field() expiredAt!: string;
  @Field({ description: "PENDING, SUCCESS, EXPIRED or FAILED" }) status!: string;
  @Field(() => QrRequestDataGql) requestData!: QrRequestDataGql;
  @Field(() => QrDataGql) data!: QrDataGql;
  @Field(() => String, {
    nullable: true,
    description: "Read-only token a browser may use to subscribe to this one transaction (generate only)",
  })
  clientToken?: string;
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
