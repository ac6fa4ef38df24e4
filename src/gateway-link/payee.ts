// Whom a link's QR pays, and whether that is the account its configuration expects
// (docs/decisions/0171-link-configuration-expected-payee.md). The page decides what the QR says; a page that swaps
// the payee would have every shopper pay someone else, with the amount and currency right. The payee is KHQR tag
// 29/30 sub 00, read only from a QR that decodes whole.

import { decodeKhqr } from "../khqr/index.js";

/** The QR's payee account (`name@bank`), or null when the QR is not a valid KHQR. */
export function qrPayee(qr: string): string | null {
  const decoded = decodeKhqr(qr);
  return decoded.status.code === 0 ? decoded.data.bankAccountID : null;
}

/** Why a QR is refused for its payee, or null when it pays `expected` (null expected: nothing to compare yet). */
export function payeeRefusal(payee: string | null, expected: string | null): string | null {
  // Account ids compared as the network compares them (mismatch checks too): without case, trimmed.
  if (expected === null || (payee !== null && samePayee(payee, expected))) return null;
  return payee === null
    ? `the payment page issued a QR whose payee cannot be read; this configuration's payee is ${expected}`
    : `the payment page issued a QR payable to ${payee}; this configuration's payee is ${expected}`;
}

/** One account id (`name@bank`) written two ways: the same account when equal without case or surrounding space. */
export function samePayee(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}
