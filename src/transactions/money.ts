export type CurrencyCode = "USD" | "KHR";
export const NUMERIC_TO_CODE: Record<number, CurrencyCode> = { 840: "USD", 116: "KHR" };

/** "1.5" → "1.50"; used where the contract shows two decimals. */
export function twoDecimals(amount: string): string {
  const [i, f = ""] = amount.split(".");
  return `${i}.${(f + "00").slice(0, 2)}`;
}

export const MONEY_DESCRIPTION = 'Exact amount as text with the currency\'s decimals: KHR 0 ("4000"), USD 2 ("1.50")';

/** Digits after the point each currency is written with: riel has no minor unit in use, the dollar has cents. */
export const CURRENCY_DECIMALS: Record<CurrencyCode, number> = { USD: 2, KHR: 0 };

/**
 * The one rule for an amount outside the REST contract's fixed fields (webhooks, subscriptions, GraphQL, the
 * checkout view): text with the currency's decimals — KHR "4000", USD "1.50". A fraction the currency does not
 * use is dropped only when it is zero: money is never rounded (a riel amount is whole wherever we accept one).
 */
export function moneyText(amount: string | number, currency: string): string {
  const decimals = CURRENCY_DECIMALS[currency as CurrencyCode];
  const text =
    typeof amount === "number" ? (Number.isInteger(amount) ? String(amount) : amount.toFixed(2)) : amount.trim();
  if (decimals === undefined || !/^-?\d+(\.\d+)?$/.test(text)) return text;
  const [whole, fraction = ""] = text.split(".");
  const kept = /^0*$/.test(fraction.slice(decimals)) ? fraction.slice(0, decimals) : fraction;
  const padded = kept.padEnd(decimals, "0");
  return padded === "" ? whole : `${whole}.${padded}`;
}
