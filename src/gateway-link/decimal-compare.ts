// Amounts a payment page states (its fixed amount, its minimum and maximum) compared with the request's as exact
// decimals: "12.5" is "12.50", and no float ever decides whether 100.005 is above 100.00.

const DECIMAL = /^\d{1,20}(?:\.\d{1,20})?$/;

/** A non-negative decimal as text ("12.50", 12.5 → "12.5"), or null when the value is not one. */
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

/** Negative, zero or positive as `a` is below, equal to or above `b` (both from decimalText). */
export function compareDecimals(a: string, b: string): number {
  const [ai, af] = parts(a);
  const [bi, bf] = parts(b);
  if (ai.length !== bi.length) return ai.length - bi.length;
  if (ai !== bi) return ai < bi ? -1 : 1;
  const width = Math.max(af.length, bf.length);
  const x = af.padEnd(width, "0");
  const y = bf.padEnd(width, "0");
  return x === y ? 0 : x < y ? -1 : 1;
}

function parts(d: string): [string, string] {
  const [whole = "", fraction = ""] = d.split(".");
  return [whole.replace(/^0+(?=\d)/, ""), fraction.replace(/0+$/, "")];
}
