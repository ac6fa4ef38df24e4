import type { AreaDefinition, KeyKindSpec } from "../module.js";
import type { LinkSettings } from "./settings.js";

/** The payment-link area's keys: `pqr_gl_…`, bound to a payment-link configuration, x-auth-type api-gateway-link. */
export const LINK_KEY: KeyKindSpec = {
  kind: "gateway_link",
  authType: "api-gateway-link",
  tag: "gl",
  paths: "/gateway-link/*",
  scheme: {
    name: "gatewayLinkKey",
    description: "A payment-link key (pqr_gl_…) for /gateway-link/*, sent with x-auth-type: api-gateway-link",
  },
  target: {
    field: "linkConfigId",
    required: "is required for a gateway-link key (create a payment-link configuration first)",
  },
};

/** What the rest of the service knows of the payment-link area (module.ts). */
export const LINK_AREA: AreaDefinition<LinkSettings> = {
  key: LINK_KEY,
  dashboard: { label: "Gateway link", target: { query: "linkConfigs", what: "payment-link configuration" } },
  openApiTag: { name: "gateway-link", description: "Payment-link QR codes (x-auth-type: api-gateway-link)" },
  // The link's 180 s are hard (no grace); a PayWay payment is still polled after them for a late approval.
  expiry: (settings) => ({ graceMs: 0, lateWatchMs: settings.lateWatchMs, lateCheckMs: 3000 }),
  docsExample: {
    path: "/gateway-link/generate-qr",
    body: () => ({ amount: 5000, currency: 116 }),
    demoKey: "gatewayLink",
  },
  // A payment link's success carries the gateway's receipt: the explorers' live-follow example shows it.
  explorer: { watch: ["receiptUrl"] },
  // Its upstream identifier is the payment link's client id (upstream_ref, unique per merchant: the index of migration
  // gateway-link-0003-client-unique); the receipt, the scan and the deeplink are its own keys of `upstream`.
  data: {
    fields: [
      {
        name: "clientId",
        type: () => String,
        nullable: true,
        description: "Gateway-link area",
        none: null,
        snapshot: { after: "updatedAt" },
        csv: { column: "client_id", after: "completed_at_utc" },
        dashboard: { label: "Client ID", show: "code", reference: "whole" },
      },
      {
        name: "receiptUrl",
        type: () => String,
        nullable: true,
        none: null,
        snapshot: { after: "updatedAt" },
        checkout: { after: "expiredAt", link: "http" },
        csv: { column: "receipt_url", after: "external_ref" },
        dashboard: { label: "Receipt", show: "link" },
      },
      {
        name: "scanned",
        type: () => Boolean,
        description: "The payer's app has scanned the QR (gateway-link area; false where it cannot be seen)",
        none: false,
        checkout: { after: "expiredAt" },
      },
      // The hosted gateway's area shows it too, declared alike; its description says it for both.
      {
        name: "deeplink",
        type: () => String,
        nullable: true,
        none: null,
        checkout: { after: "merchantName", link: "app" },
      },
    ],
    present: (tx) => ({
      clientId: tx.upstreamRef,
      receiptUrl: typeof tx.upstream.receiptUrl === "string" ? tx.upstream.receiptUrl : null,
      scanned: tx.upstream.scannedAt !== undefined,
      deeplink: typeof tx.upstream.deeplink === "string" ? tx.upstream.deeplink : null,
    }),
    // The client id: what PayWay knows the payment by.
    reference: (tx) => tx.upstreamRef,
  },
};
