import { encodeKhqr } from "../khqr/index.js";

/**
 * The simulated upstreams' own KHQR account (the gateway's, the link page's): a dynamic QR for an amount, naming
 * `name` as the payee (tag 59) unless the call names another (`payee`: the link's merchant). Its expiry (tag 99) is
 * an hour after its creation unless `lifetimeMs` says otherwise; `now` is the simulator's clock.
 */
export function simulatedQr(account: string, name: string, opts: { lifetimeMs?: number; now?: () => number } = {}) {
  return (amount: string, currency: 116 | 840, payee: string = name): string => {
    const now = opts.now?.() ?? Date.now();
    return encodeKhqr({
      accountType: "merchant",
      bakongAccountId: account,
      // A link's merchant is free text at the twin: a name too long for the tag is cut, as a bank app cuts it.
      merchantName: payee.trim().slice(0, 25) || name,
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
