import { scan } from "./scan.js";
import { lastScan } from "./slots.js";

/**
 * True when qr is a valid KHQR at nowMs: well-formed TLV, correct CRC, every required tag with a
 * valid value (see scan.ts), and — when it carries an expiration timestamp — not expired.
 * Expired means nowMs > expiration, as in the reference SDK: at the expiration millisecond itself
 * the QR is still valid. Never throws.
 */
export function verifyKhqr(qr: string, nowMs: number): boolean {
  try {
    if (scan(qr) !== 0) return false;
    const expiry = lastScan.expiresAt;
    return expiry < 0 || nowMs <= expiry;
  } catch {
    return false; // defensive: the boundary may be handed anything by untyped callers
  }
}
