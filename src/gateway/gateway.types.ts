import { Field, Float, ID, InputType, Int, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "graphql-scalars";
import { GatewayStatusGql } from "../transactions/transaction.types.js";

@InputType("GatewayItemInput")
export class GatewayItemInput {
  @Field() name!: string;
  @Field(() => Float) quantity!: number;
  @Field(() => Float) price!: number;
}

@InputType("GatewayQrDataInput")
export class GatewayQrDataInput {
  @Field({ description: "Unique per merchant, at most 20 characters; sent upstream as tran_id" }) orderId!: string;
  @Field(() => Float, { description: "USD ≥ 0.01 (2 decimals), KHR ≥ 100 (whole)" }) amount!: number;
  @Field({ description: "USD or KHR" }) currency!: string;
  @Field({ nullable: true }) firstName?: string;
  @Field({ nullable: true }) lastName?: string;
  @Field({ nullable: true }) email?: string;
  @Field({ nullable: true }) phone?: string;
  @Field(() => [GatewayItemInput], { nullable: true }) items?: GatewayItemInput[];
  @Field(() => Int, { nullable: true, description: "Minutes, 3 to 172800; default 6" }) lifetime?: number;
  @Field({ nullable: true }) qrImageTemplate?: string;
}

@InputType("GenerateGatewayQrInput")
export class GenerateGatewayQrInput {
  @Field(() => GatewayQrDataInput) qrData!: GatewayQrDataInput;
  @Field(() => GraphQLJSONObject, { nullable: true }) metaData?: Record<string, unknown>;
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
