// The one Money rule: amounts as exact decimal text (never a float), how each currency writes them, how two compare,
// and how a person sees them. Pure, with no import: the server imports this file, and the checkout page and the
// dashboard load its compiled form (dist/src/money/money.js, served as their `money.js`: src/money/browser-file.ts),
// so server and browsers share one source.

export type CurrencyCode = "USD" | "KHR";
export const NUMERIC_TO_CODE: Record<number, CurrencyCode> = { 840: "USD", 116: "KHR" };

/** Digits after the point each currency is written with: riel has no minor unit in use, the dollar has cents. */
export const CURRENCY_DECIMALS: Record<CurrencyCode, number> = { USD: 2, KHR: 0 };

export const MONEY_DESCRIPTION = 'Exact amount as text with the currency\'s decimals: KHR 0 ("4000"), USD 2 ("1.50")';

/** "USD"/"KHR", or the ISO 4217 numbers KHQR writes (840/116); null for anything else. */
export function currencyCode(value: unknown): CurrencyCode | null {
  const text = typeof value === "number" ? String(value) : typeof value === "string" ? value.trim().toUpperCase() : "";
  if (text === "USD" || text === "840") return "USD";
  if (text === "KHR" || text === "116") return "KHR";
  return null;
}

// --- parse -----------------------------------------------------------------------------------------------------

/** Amounts above this are refused whatever the currency (far beyond any QR's 13 characters). */
export const MAX_AMOUNT = 1e13;

/**
 * A JSON number as an exact decimal string, or the reason it is not an acceptable amount. JSON numbers
 * arrive as doubles; the shortest round-trip form (`String(n)`) is what the client wrote for any amount
 * with ≤ 15 significant digits, so no float arithmetic ever touches the amount. Exponent forms are
 * expanded; precision is checked against `maxDecimals`.
 */
export function exactDecimal(n: unknown, maxDecimals: number): { value: string } | { error: string } {
  if (typeof n !== "number" || !Number.isFinite(n)) return { error: "must be a number" };
  if (n <= 0) return { error: "must be greater than 0" };
  if (n > MAX_AMOUNT) return { error: "is too large" };
  const text = n.toFixed(20).replace(/\.?0+$/, "");
  const shortest = String(n).includes("e") ? text : String(n);
  // Below 1e-6 the shortest form is exponential (1e-7, 5e-324) and has more than 6 decimals; toFixed(20)
  // would round the tiniest of them to "0", so they are counted from the exponent form instead.
  const decimals = String(n).includes("e-")
    ? Infinity
    : shortest.includes(".")
      ? shortest.length - shortest.indexOf(".") - 1
      : 0;
  if (decimals > maxDecimals) {
    return {
      error:
        maxDecimals === 0
          ? "must be a whole number for this currency"
          : `must have at most ${maxDecimals} decimal places`,
    };
  }
  return { value: shortest };
}

/**
 * An exact decimal's canonical text ("01.50" → "1.5", "4000.00" → "4000"), from text or a JSON number (whose
 * shortest text is what the upstream wrote: 1.5 → "1.5"); null when it is not a non-negative decimal.
 */
export function canonicalDecimal(value: unknown): string | null {
  let text: string | null = null;
  if (typeof value === "number" && Number.isFinite(value) && !/e/i.test(String(value))) text = String(value);
  else if (typeof value === "string") text = value.trim();
  if (text === null || !/^\d+(\.\d+)?$/.test(text)) return null;
  const [whole, fraction = ""] = text.split(".");
  const w = whole.replace(/^0+(?=\d)/, "");
  const f = fraction.replace(/0+$/, "");
  return f === "" ? w : `${w}.${f}`;
}

const DECIMAL = /^\d{1,20}(?:\.\d{1,20})?$/;

/** A non-negative decimal as written ("12.50", 12.5 → "12.5"; at most 20 digits each side), or null. */
export function decimalText(v: unknown): string | null {
  if (typeof v === "number") {
    if (!Number.isFinite(v) || v < 0) return null;
    const s = String(v);
    return DECIMAL.test(s) ? s : null;
  }
  if (typeof v !== "string") return null;
  const s = v.trim();
  return DECIMAL.test(s) ? s : null;
}

// --- compare ---------------------------------------------------------------------------------------------------

function decimalParts(d: string): [string, string] {
  const [whole = "", fraction = ""] = d.split(".");
  return [whole.replace(/^0+(?=\d)/, ""), fraction.replace(/0+$/, "")];
}

/**
 * Negative, zero or positive as `a` is below, equal to or above `b` (non-negative decimal texts, from decimalText or
 * canonicalDecimal): "12.5" is "12.50", and no float ever decides whether 100.005 is above 100.00.
 */
export function compareDecimals(a: string, b: string): number {
  const [ai, af] = decimalParts(a);
  const [bi, bf] = decimalParts(b);
  if (ai.length !== bi.length) return ai.length - bi.length;
  if (ai !== bi) return ai < bi ? -1 : 1;
  const width = Math.max(af.length, bf.length);
  const x = af.padEnd(width, "0");
  const y = bf.padEnd(width, "0");
  return x === y ? 0 : x < y ? -1 : 1;
}

// --- format ----------------------------------------------------------------------------------------------------

/**
 * The one rule for an amount outside the REST contract's fixed fields (webhooks, subscriptions, GraphQL, the
 * checkout view, CSV): text with the currency's decimals — KHR "4000", USD "1.50". A fraction the currency does not
 * use is dropped only when it is zero: money is never rounded (a riel amount is whole wherever we accept one). A
 * JSON number is read by its shortest text (1.5 → "1.5"), never through float arithmetic.
 */
export function moneyText(amount: string | number, currency: string): string {
  const decimals = CURRENCY_DECIMALS[currency as CurrencyCode];
  const text = typeof amount === "number" ? (exactDecimalText(amount) ?? String(amount)) : amount.trim();
  if (decimals === undefined || !/^-?\d+(\.\d+)?$/.test(text)) return text;
  const [whole, fraction = ""] = text.split(".");
  const kept = /^0*$/.test(fraction.slice(decimals)) ? fraction.slice(0, decimals) : fraction;
  const padded = kept.padEnd(decimals, "0");
  return padded === "" ? whole : `${whole}.${padded}`;
}

/** A finite number's exact decimal text (exponent forms expanded), or null. */
function exactDecimalText(n: number): string | null {
  if (!Number.isFinite(n)) return null;
  const sign = n < 0 ? "-" : "";
  const d = exactDecimal(Math.abs(n), Infinity);
  return "value" in d ? `${sign}${d.value}` : n === 0 ? "0" : null;
}

/** "1.5" → "1.50"; where the REST contract shows two decimals whatever the currency (check-status). */
export function twoDecimals(amount: string): string {
  const [i, f = ""] = amount.split(".");
  return `${i}.${(f + "00").slice(0, 2)}`;
}

/**
 * An amount as a person reads it, without the currency: thousands grouped, the dollar with its cents, riel with no
 * minor unit unless a fraction is really there ("4000" KHR → "4,000"; "1234.5" USD → "1,234.50").
 */
export function groupedAmount(amount: string, currency: string): string {
  const [whole, frac = ""] = String(amount).split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const digits = currency === "USD" ? frac.padEnd(2, "0") : frac.replace(/0+$/, "");
  return `${grouped}${digits ? `.${digits}` : ""}`;
}

/**
 * How an amount is shown to a person, the same on the checkout page, in the dashboard and on the QR card: the value
 * comes already written by moneyText, so this only groups the thousands: "4,000 KHR", "1,234.50 USD".
 */
export function formatMoney(amount: string, currency: string): string {
  return `${groupedAmount(amount, currency)} ${currency}`;
}

/** The sign a currency is drawn with (the KHQR card's centre mark): "$", "៛"; the code itself for another. */
export const CURRENCY_SYMBOLS: Record<CurrencyCode, string> = { USD: "$", KHR: "៛" };

export function currencySymbol(currency: string): string {
  return CURRENCY_SYMBOLS[currency as CurrencyCode] ?? currency;
}
