import type { AreaDefinition, KeyKindSpec } from "../module.js";
import { GatewayStatusGql } from "./gateway.types.js";

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

/** Order ids are unique per merchant: each example generate of /docs gets a new one (at most 20 characters). */
function freshOrderId(): string {
  return `demo-${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 3).toString(36)}`.slice(0, 20);
}

/** What the rest of the service knows of the hosted gateway area (module.ts). */
export const GATEWAY_AREA: AreaDefinition = {
  key: GATEWAY_KEY,
  dashboard: { label: "Hosted gateway", target: { query: "gatewayConfigs", what: "gateway configuration" } },
  openApiTag: { name: "gateway", description: "Hosted gateway QR codes (x-auth-type: api-gateway)" },
  docsExample: {
    path: "/gateway/generate-qr",
    body: () => ({ qrData: { orderId: freshOrderId(), amount: 2.5, currency: "USD", lifetime: 1440 } }),
    demoKey: "gateway",
    answer: { orderId: "orderId" },
    // Order ids are unique per merchant: a generate's example takes a new one every time, a check the issued one.
    fresh: { orderId: { make: freshOrderId, what: "a new order id" } },
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
      {
        // The payment link's area shows it too, declared alike (AreaData.fields): one field.
        name: "deeplink",
        type: () => String,
        nullable: true,
        description: "Hosted gateway and PayWay link payments: the deeplink that opens the payer's banking app on it",
        none: null,
        checkout: { after: "merchantName", link: "app" },
      },
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
      deeplink: typeof tx.upstream.deeplink === "string" ? tx.upstream.deeplink : null,
      gatewayStatus: tx.upstream.gatewayStatus ?? null,
    }),
    ref: { search: "as-typed", field: "orderId" },
    // The order id is the gateway's `tran_id`: what the gateway knows the payment by.
    reference: (tx) => tx.upstreamRef,
  },
};
