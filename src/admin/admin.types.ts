import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { ListedEnum } from "../graphql/listed-enums.js";
import { ListedFields } from "../graphql/listed-fields.js";

/** The key kinds of the app's areas (graphql/listed-enums.ts): filled, with its description, by app.ts. */
export const KEY_KIND_ENUM = new ListedEnum("KeyKind");
export type KeyKindGql = string;

@ObjectType("Merchant")
export class MerchantGql {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field() accountType!: string;
  @Field() bakongAccountId!: string;
  @Field() merchantName!: string;
  @Field() merchantCity!: string;
  @Field(() => String, { nullable: true }) merchantId!: string | null;
  @Field(() => String, { nullable: true }) acquiringBank!: string | null;
  @Field() merchantCategoryCode!: string;
  @Field(() => Int) defaultCurrency!: number;
  @Field(() => String, { nullable: true, description: "Deeplink settings: the app's name" }) deeplinkAppName!:
    string | null;
  @Field(() => String, { nullable: true, description: "Deeplink settings: the app's icon (https)" })
  deeplinkAppIconUrl!: string | null;
  @Field(() => String, { nullable: true, description: "Deeplink settings: where the banking app returns to" })
  deeplinkCallback!: string | null;
  @Field(() => String, {
    nullable: true,
    description:
      "Where the checkout page sends payers back after the final state (a generate request's returnUrl wins)",
  })
  returnUrl!: string | null;
  @Field() createdAt!: Date;
}

@InputType("MerchantInput")
export class MerchantInputGql {
  @Field({ nullable: true }) name?: string;
  @Field({ nullable: true, description: "individual (KHQR tag 29) or merchant (tag 30)" }) accountType?: string;
  @Field({ nullable: true }) bakongAccountId?: string;
  @Field({ nullable: true }) merchantName?: string;
  @Field({ nullable: true }) merchantCity?: string;
  @Field(() => String, { nullable: true }) merchantId?: string | null;
  @Field(() => String, { nullable: true }) acquiringBank?: string | null;
  @Field({ nullable: true }) merchantCategoryCode?: string;
  @Field(() => Int, { nullable: true }) defaultCurrency?: number;
  @Field(() => String, {
    nullable: true,
    description: "Deeplink settings (all three or none): generic QRs then carry a deeplink",
  })
  deeplinkAppName?: string | null;
  @Field(() => String, { nullable: true }) deeplinkAppIconUrl?: string | null;
  @Field(() => String, { nullable: true }) deeplinkCallback?: string | null;
  @Field(() => String, {
    nullable: true,
    description: "https (http only on localhost while the service runs there); null clears it",
  })
  returnUrl?: string | null;
}

@ObjectType("ApiKey")
export class ApiKeyGql {
  @Field(() => ID) id!: string;
  @Field(() => ID) merchantId!: string;
  @Field(() => KEY_KIND_ENUM.values) kind!: KeyKindGql;
  @Field() label!: string;
  @Field({ description: "The first characters of the key" }) prefix!: string;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) lastUsedAt!: Date | null;
  @Field(() => Date, { nullable: true }) revokedAt!: Date | null;
}

@ObjectType("CreatedApiKey")
export class CreatedApiKeyGql {
  @Field({ description: "The plaintext key. Shown only in this response; store it now." }) apiKey!: string;
  @Field(() => ApiKeyGql) key!: ApiKeyGql;
}

@InputType("ApiKeyInput")
export class ApiKeyInputGql {
  @Field(() => ID) merchantId!: string;
  @Field(() => KEY_KIND_ENUM.values) kind!: KeyKindGql;
  @Field({ nullable: true }) label?: string;
}

/**
 * What a key is bound to, one nullable ID field per area that binds its keys, named as the area declares
 * (`AreaDefinition.key.target.field`, e.g. `gatewayConfigId`): on the key after `prefix`, on the input after `label`.
 * Filled by app.ts from its module list when its schema is built (graphql/listed-fields.ts).
 */
export const KEY_TARGET_FIELDS = [new ListedFields(ApiKeyGql, "prefix"), new ListedFields(ApiKeyInputGql, "label")];

@ObjectType("MerchantFieldRule", { description: "One merchant field's rule (the same table the server applies)" })
export class MerchantFieldRuleGql {
  @Field() field!: string;
  @Field() label!: string;
  @Field(() => [String], { description: "Account types for which the field is required (empty: optional)" })
  requiredFor!: string[];
  @Field(() => Int) maxLength!: number;
  @Field(() => String, {
    nullable: true,
    description: "JavaScript regular expression source the whole value must match",
  })
  pattern!: string | null;
  @Field(() => String, { nullable: true }) patternMessage!: string | null;
  @Field() help!: string;
}

@ObjectType("MerchantGroupRule", {
  description: "A limit on several fields together (each costs its length plus perFieldOverhead)",
})
export class MerchantGroupRuleGql {
  @Field(() => [String]) fields!: string[];
  @Field(() => [String]) appliesTo!: string[];
  @Field(() => Int) perFieldOverhead!: number;
  @Field(() => Int) maxTotal!: number;
  @Field() message!: string;
}

@ObjectType("MerchantRules", { description: "The KHQR account rules for merchants, for forms to check inline" })
export class MerchantRulesGql {
  @Field(() => [MerchantFieldRuleGql]) fields!: MerchantFieldRuleGql[];
  @Field(() => [MerchantGroupRuleGql]) groups!: MerchantGroupRuleGql[];
  @Field(() => [String]) accountTypes!: string[];
  @Field(() => [Int]) currencies!: number[];
}
