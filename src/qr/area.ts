import type { AreaDefinition, KeyKindSpec } from "../module.js";
import type { QrSettings } from "./settings.js";

/** The generic QR area's keys: `pqr_qr_…`, sent with x-auth-type api-key on /qr/*. */
export const QR_KEY: KeyKindSpec = {
  kind: "qr",
  authType: "api-key",
  tag: "qr",
  paths: "/qr/*",
  scheme: { name: "qrKey", description: "A generic-QR key (pqr_qr_…) for /qr/*, sent with x-auth-type: api-key" },
};

/** What the rest of the service knows of the generic QR area (module.ts). */
export const QR_AREA: AreaDefinition<QrSettings> = {
  key: QR_KEY,
  dashboard: { label: "Generic QR" },
  openApiTag: { name: "qr", description: "Generic KHQR codes (x-auth-type: api-key)" },
  // A QR past its expiry waits for a check that answers (the network may still report it paid), then a late watch.
  expiry: (settings) => ({
    graceMs: settings.expiryGraceMs,
    lateWatchMs: settings.lateWatchMs,
    lateCheckMs: settings.lateCheckIntervalMs,
  }),
  docsExample: {
    path: "/qr/generate",
    body: () => ({ amount: 1.5, currency: 840, expiredAfter: 86_400_000 }),
    demoKey: "qr",
  },
  // Its upstream identifier is the QR's md5 (upstream_ref, lowercase hex): searched lowercased; the payer's bank
  // knows the payment by the network's hash, not by it.
  data: {
    fields: [
      {
        name: "md5",
        type: () => String,
        nullable: true,
        description: "Generic QR area",
        none: null,
        snapshot: { after: "updatedAt" },
        csv: { column: "md5", after: "completed_at_utc" },
        dashboard: { label: "md5", show: "code", reference: "short" },
      },
    ],
    present: (tx) => ({ md5: tx.upstreamRef }),
    ref: { search: "lowercased" },
  },
};
