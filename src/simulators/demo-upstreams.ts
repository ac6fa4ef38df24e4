/** The demo tenant's upstream identities, known to the built-in simulators. */
export const DEMO_GATEWAY = { merchantId: "demo_merchant", apiKey: "demo-gateway-api-key-0123456789" };

export function demoLinkUrl(base: string): string {
  return `${base}/sim/link/p/demo-coffee?currency=KHR`;
}
