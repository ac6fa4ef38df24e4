/** The demo tenant's upstream identities, known to the built-in simulators. */
export const DEMO_GATEWAY = { merchantId: "demo_merchant", apiKey: "demo-gateway-api-key-0123456789" };

/** Payment links the built-in PayWay twin serves from the start (the demo's, and a USD one to try). */
export const DEMO_PAYWAY_LINKS = [
  { code: "ABAPAYDEMO01", currency: "KHR" as const, title: "Demo Coffee", merchant: "Demo Coffee" },
  { code: "ABAPAYDEMOUSD", currency: "USD" as const, title: "Demo Coffee (USD)", merchant: "Demo Coffee" },
];

export function demoLinkUrl(base: string): string {
  return `${base}/sim/link/p/demo-coffee?currency=KHR`;
}
