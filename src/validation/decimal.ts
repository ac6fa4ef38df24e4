/** Amounts above this are refused whatever the currency (far beyond any QR's 13 characters). */
const MAX_AMOUNT = 1e13;

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
