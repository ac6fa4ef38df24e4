import type { AreaDefinition, KeyKindSpec } from "../module.js";
import { freshOrderId } from "../rest/demo-examples.js";

/** The hosted gateway area's keys: `pqr_gw_…`, bound to a gateway configuration, x-auth-type api-gateway. */
export const GATEWAY_KEY: KeyKindSpec = {
  kind: "gateway",
  authType: "api-gateway",
  tag: "gw",
  paths: "/gateway/*",
  scheme: {
    name: "gatewayKey",
    description: "A hosted-gateway key (pqr_gw_…) for /gateway/*, sent with x-auth-type: api-gateway",
  },
  target: {
    field: "gatewayConfigId",
    required: "is required for a gateway key (create a gateway configuration first)",
  },
};

/** What the rest of the service knows of the hosted gateway area (module.ts). */
export const GATEWAY_AREA: AreaDefinition = {
  key: GATEWAY_KEY,
  dashboard: { label: "Hosted gateway", target: { query: "gatewayConfigs", what: "gateway configuration" } },
  openApiTag: { name: "gateway", description: "Hosted gateway QR codes (x-auth-type: api-gateway)" },
  docsExample: {
    path: "/gateway/generate-qr",
    body: () => ({ qrData: { orderId: freshOrderId(), amount: 2.5, currency: "USD", lifetime: 1440 } }),
    demoKey: "gateway",
  },
};
