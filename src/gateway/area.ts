import type { AreaDefinition, KeyKindSpec } from "../module.js";
import { freshOrderId } from "../rest/demo-examples.js";
import { GatewayStatusGql } from "./gateway.types.js";
import { DEEPLINK_FIELD, storedDeeplink } from "../upstreams/deeplink-field.js";

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
  // Its upstream identifier is the merchant's order id (upstream_ref, unique per merchant: gateway-0003); its
  // answers' status words and deeplink are its own keys of `upstream`.
  data: {
    fields: [
      {
        name: "orderId",
        type: () => String,
        nullable: true,
        description: "Hosted gateway area",
        none: null,
        snapshot: { after: "updatedAt" },
        csv: { column: "order_id", after: "completed_at_utc" },
        dashboard: { label: "Order ID", reference: "whole" },
      },
      DEEPLINK_FIELD,
      {
        name: "gatewayStatus",
        type: () => GatewayStatusGql,
        nullable: true,
        none: null,
        snapshot: { after: "completedAt", select: "{ code message }" },
        dashboard: { label: "Gateway status" },
      },
    ],
    present: (tx) => ({
      orderId: tx.upstreamRef,
      deeplink: storedDeeplink(tx.upstream),
      gatewayStatus: tx.upstream.gatewayStatus ?? null,
    }),
    ref: { search: "as-typed", reference: true },
  },
};
