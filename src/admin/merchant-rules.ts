import type { FieldError } from "../errors.js";
import { KHQR_MAX } from "../khqr/index.js";

export type AccountType = "individual" | "merchant";
export const ACCOUNT_TYPES: readonly AccountType[] = ["individual", "merchant"];
const BOTH: AccountType[] = [...ACCOUNT_TYPES];

/** One field's rule, as data: the server applies it here and the dashboard shows it inline (GraphQL `merchantRules`). */
export interface MerchantFieldRule {
  field: string;
  label: string;
  /** The account types for which the field must be filled (empty: optional). */
  requiredFor: AccountType[];
  maxLength: number;
  /** A JavaScript regular expression source that the whole value must match. */
  pattern: string | null;
  patternMessage: string | null;
  help: string;
}

/** A limit on several fields together: the KHQR merchant-account template (tag 30) must fit 99 characters. */
export interface MerchantGroupRule {
  fields: string[];
  appliesTo: AccountType[];
  /** Each present field costs its length plus this (a TLV header). */
  perFieldOverhead: number;
  maxTotal: number;
  message: string;
}

/**
 * The KHQR account rules a merchant must satisfy before its QR codes can be encoded. Lengths are the
 * codec's own (src/khqr/rules.ts), so the dashboard, this check and encodeKhqr agree.
 */
export const MERCHANT_FIELD_RULES: readonly MerchantFieldRule[] = [
  {
    field: "name",
    label: "Display name",
    requiredFor: BOTH,
    maxLength: 100,
    pattern: null,
    patternMessage: null,
    help: "Shown in this dashboard only",
  },
  {
    field: "bakongAccountId",
    label: "Bakong account ID",
    requiredFor: BOTH,
    maxLength: KHQR_MAX.ACCOUNT_ID,
    pattern: "^[^@\\s]+@[^@\\s]+$",
    patternMessage: "must look like name@bank",
    help: "The account that receives payments, e.g. shop@devb",
  },
  {
    field: "merchantName",
    label: "Merchant name",
    requiredFor: BOTH,
    maxLength: KHQR_MAX.MERCHANT_NAME,
    pattern: null,
    patternMessage: null,
    help: "Printed by the payer's banking app (KHQR tag 59)",
  },
  {
    field: "merchantCity",
    label: "Merchant city",
    requiredFor: BOTH,
    maxLength: KHQR_MAX.MERCHANT_CITY,
    pattern: null,
    patternMessage: null,
    help: "KHQR tag 60",
  },
  {
    field: "merchantId",
    label: "Merchant ID",
    requiredFor: ["merchant"],
    maxLength: KHQR_MAX.MERCHANT_ID,
    pattern: null,
    patternMessage: null,
    help: "Required for merchant accounts (tag 30)",
  },
  {
    field: "acquiringBank",
    label: "Acquiring bank",
    requiredFor: ["merchant"],
    maxLength: KHQR_MAX.ACQUIRING_BANK,
    pattern: null,
    patternMessage: null,
    help: "Required for merchant accounts (tag 30)",
  },
  {
    field: "merchantCategoryCode",
    label: "Merchant category code",
    requiredFor: BOTH,
    maxLength: 4,
    pattern: "^\\d{4}$",
    patternMessage: "must be 4 digits",
    help: "ISO 18245 MCC; 5999 when unsure",
  },
];

export const MERCHANT_GROUP_RULES: readonly MerchantGroupRule[] = [
  {
    fields: ["bakongAccountId", "merchantId", "acquiringBank"],
    appliesTo: ["merchant"],
    perFieldOverhead: 4,
    maxTotal: KHQR_MAX.TEMPLATE,
    message: `account ID, merchant ID and acquiring bank must fit ${KHQR_MAX.TEMPLATE} characters together (KHQR tag 30)`,
  },
];

const absent = (v: unknown): boolean => v === undefined || v === null || v === "";

/** Every broken rule, in table order. The dashboard's js/merchant-rules.js applies the same table the same way. */
export function validateMerchantAccount(merchant: object): FieldError[] {
  const m = merchant as Record<string, unknown>;
  const type = m.accountType === "individual" || m.accountType === "merchant" ? m.accountType : undefined;
  const errors: FieldError[] = [];
  for (const r of MERCHANT_FIELD_RULES) {
    const v = m[r.field];
    if (absent(v)) {
      // Without a valid account type, what every type requires is still required.
      const required =
        type !== undefined ? r.requiredFor.includes(type) : r.requiredFor.length === ACCOUNT_TYPES.length;
      if (required) errors.push({ field: r.field, message: "is required" });
    } else if (typeof v !== "string") errors.push({ field: r.field, message: "must be a string" });
    else if (v.length > r.maxLength)
      errors.push({ field: r.field, message: `must be at most ${r.maxLength} characters` });
    else if (r.pattern !== null && !new RegExp(r.pattern).test(v))
      errors.push({ field: r.field, message: r.patternMessage ?? "has an invalid format" });
  }
  for (const g of MERCHANT_GROUP_RULES) {
    if (type === undefined || !g.appliesTo.includes(type)) continue;
    const total = g.fields.reduce(
      (n, f) => (typeof m[f] === "string" && m[f] !== "" ? n + (m[f] as string).length + g.perFieldOverhead : n),
      0,
    );
    if (total > g.maxTotal) errors.push({ field: g.fields[0], message: g.message });
  }
  return errors;
}
