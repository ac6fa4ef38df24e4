export type CurrencyCode = "USD" | "KHR";
export const NUMERIC_TO_CODE: Record<number, CurrencyCode> = { 840: "USD", 116: "KHR" };
export const CODE_TO_NUMERIC: Record<CurrencyCode, 116 | 840> = { USD: 840, KHR: 116 };

/** "1.5" → "1.50"; used where the contract shows two decimals. */
export function twoDecimals(amount: string): string {
  const [i, f = ""] = amount.split(".");
  return `${i}.${(f + "00").slice(0, 2)}`;
}
