import type { FieldError } from "../errors.js";

export type CurrencyCode = "USD" | "KHR";
export const NUMERIC_TO_CODE: Record<number, CurrencyCode> = { 840: "USD", 116: "KHR" };
export const CODE_TO_NUMERIC: Record<CurrencyCode, 116 | 840> = { USD: 840, KHR: 116 };

/**
 * A JSON number as an exact decimal string. JSON numbers arrive as doubles; the shortest round-trip
 * form (`String(n)`) is what the client wrote for any amount with ≤ 15 significant digits, so no float
 * arithmetic ever touches the amount. Exponent forms are expanded; precision is checked per currency.
 */
export function decimalFromNumber(n: unknown, field: string, maxDecimals: number, errors: FieldError[]): string | null {
  if (typeof n !== "number" || !Number.isFinite(n)) {
    errors.push({ field, message: "must be a number" });
    return null;
  }
  if (n <= 0) {
    errors.push({ field, message: "must be greater than 0" });
    return null;
  }
  if (n > 1e13) {
    errors.push({ field, message: "is too large" });
    return null;
  }
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
    errors.push({
      field,
      message:
        maxDecimals === 0
          ? "must be a whole number for this currency"
          : `must have at most ${maxDecimals} decimal places`,
    });
    return null;
  }
  return shortest;
}

/** "1.5" → "1.50"; used where the contract shows two decimals. */
export function twoDecimals(amount: string): string {
  const [i, f = ""] = amount.split(".");
  return `${i}.${(f + "00").slice(0, 2)}`;
}

export function checkMeta(meta: unknown, field: string, errors: FieldError[]): Record<string, unknown> {
  if (meta === undefined || meta === null) return {};
  if (typeof meta !== "object" || Array.isArray(meta)) {
    errors.push({ field, message: "must be an object of key/value pairs" });
    return {};
  }
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(meta));
  } catch {
    // Only nesting thousands of levels deep overflows the serializer, and each level costs ≥ 2 bytes: far over the limit.
    size = Infinity;
  }
  if (size > 4096) errors.push({ field, message: "must be at most 4096 bytes as JSON" });
  if (Object.keys(meta).length > 50) errors.push({ field, message: "must have at most 50 keys" });
  if (size <= 4096 && !storableJson(meta)) errors.push({ field, message: UNSTORABLE });
  return meta as Record<string, unknown>;
}

export const UNSTORABLE = "must not contain NUL characters or unpaired surrogates (they cannot be stored)";

/** PostgreSQL text and jsonb cannot hold U+0000 or a lone UTF-16 surrogate half. */
export function storableText(s: string): boolean {
  return !s.includes("\u0000") && !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}

/** Every key and string value of a JSON value is storable (iterative: the value may be deep). */
function storableJson(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (!storableText(v)) return false;
    } else if (Array.isArray(v)) stack.push(...v);
    else if (typeof v === "object" && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (!storableText(k)) return false;
        stack.push(x);
      }
    }
  }
  return true;
}
