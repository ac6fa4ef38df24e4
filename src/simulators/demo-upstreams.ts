/** The demo tenant's upstream identities, known to the built-in simulators. */
export const DEMO_GATEWAY = { merchantId: "demo_merchant", apiKey: "demo-gateway-api-key-0123456789" };

/** Payment links the built-in PayWay twin serves from the start (the demo's, and a USD one to try). */
export const DEMO_PAYWAY_LINKS = [
  { code: "ABAPAYDEMO01", currency: "KHR" as const, title: "Demo Coffee", merchant: "Demo Coffee" },
  { code: "ABAPAYDEMOUSD", currency: "USD" as const, title: "Demo Coffee (USD)", merchant: "Demo Coffee" },
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
