/**
 * The demo merchant's name: the demo tenant's merchant, and the payee the built-in simulators' QRs name (KHQR tag
 * 59), so a bank app shows the same payee whichever area issued the QR (docs/decisions/0256-one-demo-merchant.md).
 */
export const DEMO_MERCHANT_NAME = "Demo Coffee";

/** The demo tenant's upstream identities, known to the built-in simulators. */
export const DEMO_GATEWAY = { merchantId: "demo_merchant", apiKey: "demo-gateway-api-key-0123456789" };

/** Payment links the built-in PayWay twin serves from the start (the demo's, and a USD one to try). */
export const DEMO_PAYWAY_LINKS = [
  { code: "ABAPAYDEMO01", currency: "KHR" as const, title: DEMO_MERCHANT_NAME, merchant: DEMO_MERCHANT_NAME },
  {
    code: "ABAPAYDEMOUSD",
    currency: "USD" as const,
    title: `${DEMO_MERCHANT_NAME} (USD)`,
    merchant: DEMO_MERCHANT_NAME,
  },
];

/**
 * The demo tenant's payment link: the built-in PayWay twin's page, driven by the `payway` adapter and followed
 * without a browser, as a real PayWay link is in production.
 */
export function demoLinkUrl(base: string): string {
  return `${base}/sim/payway/${DEMO_PAYWAY_LINKS[0].code}`;
}

/** The adapter of the demo's link configuration. */
export const DEMO_LINK_PROTOCOL = "payway";
