import { isAmount } from "./rules.js";
import type { KhqrCurrency } from "./types.js";

/**
 * The amount as encodeKhqr writes it into tag 54, or null when it cannot be written.
 * Input: an exact decimal string ("10", "1.5", "0.50"; leading zeros are dropped).
 * - USD (840): at most 2 decimals; a fraction is padded to 2 ("1.5" → "1.50"), an integer stays
 *   an integer ("10" → "10"), which is what the reference SDK writes.
 * - KHR (116): riel is written without decimals, as the SDK does; a zero fraction is dropped
 *   ("1000.00" → "1000"), any other fraction is rejected.
 * The result must be greater than zero and at most 13 characters.
 */
export function formatKhqrAmount(amount: string, currency: KhqrCurrency): string | null {
  if (typeof amount !== "string" || (currency !== 116 && currency !== 840)) return null;
  const n = amount.length;
  if (n === 0 || !isAmountShape(amount)) return null;
  const dot = amount.indexOf(".");
  const intEnd = dot < 0 ? n : dot;
  let z = 0;
  while (z < intEnd - 1 && amount.charCodeAt(z) === 48) z++;
  const intPart = amount.slice(z, intEnd);
  const fraction = dot < 0 ? "" : amount.slice(dot + 1);
  let out: string;
  if (currency === 116) {
    if (fraction !== "" && fraction !== "0" && fraction !== "00") return null;
    out = intPart;
  } else {
    out = fraction === "" ? intPart : intPart + "." + (fraction.length === 1 ? fraction + "0" : fraction);
  }
  return isAmount(out, 0, out.length, 2) ? out : null;
}

/** Digits with an optional '.' and 1–2 decimals, before leading zeros are dropped. */
function isAmountShape(s: string): boolean {
  let dot = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (dot >= 0) return false;
      dot = i;
    } else if (c < 48 || c > 57) return false;
  }
  if (dot < 0) return true;
  const fraction = s.length - dot - 1;
  return dot > 0 && fraction >= 1 && fraction <= 2;
}
