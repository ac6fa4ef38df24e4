import { scan } from "./scan.js";
import { lastScan } from "./slots.js";

/**
 * True when qr is a valid KHQR at nowMs: well-formed TLV, correct CRC, every required tag with a
 * valid value (see scan.ts), and — when it carries an expiration timestamp — not expired
 * (expiration > nowMs). Never throws.
 */
export function verifyKhqr(qr: string, nowMs: number): boolean {
  try {
    if (scan(qr) !== 0) return false;
    const expiry = lastScan.expiresAt;
    return expiry < 0 || expiry > nowMs;
  } catch {
    return false; // defensive: the boundary may be handed anything by untyped callers
  }
}
