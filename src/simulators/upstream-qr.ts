import { encodeKhqr } from "../khqr/index.js";

/**
 * The simulated upstreams' own KHQR account (the gateway's, the link page's): a dynamic QR for an amount. Its expiry
 * (tag 99) is an hour after its creation unless `lifetimeMs` says otherwise; `now` is the simulator's clock.
 */
export function simulatedQr(account: string, name: string, opts: { lifetimeMs?: number; now?: () => number } = {}) {
  return (amount: string, currency: 116 | 840): string => {
    const now = opts.now?.() ?? Date.now();
    return encodeKhqr({
      accountType: "merchant",
      bakongAccountId: account,
      merchantName: name,
      merchantCity: "Phnom Penh",
      merchantId: "SIM0001",
      acquiringBank: "Simulated Bank",
      currency,
      amount,
      creationTimestamp: now,
      expirationTimestamp: now + (opts.lifetimeMs ?? 3600_000),
    }).qr;
  };
}
