import { encodeKhqr } from "../khqr/index.js";

/** The simulated upstreams' own KHQR account (the gateway's, the link page's): a dynamic QR for an amount. */
export function simulatedQr(account: string, name: string) {
  return (amount: string, currency: 116 | 840): string => {
    const now = Date.now();
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
      expirationTimestamp: now + 3600_000,
    }).qr;
  };
}
