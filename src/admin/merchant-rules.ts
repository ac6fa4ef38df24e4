import type { FieldError } from "../errors.js";

/**
 * The KHQR account rules a merchant must satisfy before its QR codes can be encoded (shown inline in the
 * dashboard too). Lengths follow the KHQR specification's tag limits.
 */
export function validateMerchantAccount(m: {
  accountType?: string;
  bakongAccountId?: string | null;
  merchantName?: string | null;
  merchantCity?: string | null;
  merchantId?: string | null;
  acquiringBank?: string | null;
  merchantCategoryCode?: string | null;
}): FieldError[] {
  const errors: FieldError[] = [];
  const req = (field: string, v: string | null | undefined, max: number) => {
    if (v === undefined || v === null || v === "") errors.push({ field, message: "is required" });
    else if (v.length > max) errors.push({ field, message: `must be at most ${max} characters` });
  };
  req("bakongAccountId", m.bakongAccountId, 32);
  if (m.bakongAccountId && !/^[^@\s]+@[^@\s]+$/.test(m.bakongAccountId)) errors.push({ field: "bakongAccountId", message: "must look like name@bank" });
  req("merchantName", m.merchantName, 25);
  req("merchantCity", m.merchantCity, 15);
  if (m.accountType === "merchant") {
    req("merchantId", m.merchantId, 32);
    req("acquiringBank", m.acquiringBank, 32);
  } else if (m.acquiringBank && m.acquiringBank.length > 32) errors.push({ field: "acquiringBank", message: "must be at most 32 characters" });
  if (m.merchantCategoryCode !== undefined && m.merchantCategoryCode !== null && !/^\d{4}$/.test(m.merchantCategoryCode)) {
    errors.push({ field: "merchantCategoryCode", message: "must be 4 digits" });
  }
  return errors;
}
