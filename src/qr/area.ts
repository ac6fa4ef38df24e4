import type { AreaDefinition, KeyKindSpec } from "../module.js";
import type { QrSettings } from "./settings.js";
import { networkHash, networkPaidAt, PAYMENT_COLUMNS, paymentView } from "./payment-data.js";

/** The generic QR area's keys: `pqr_qr_…`, sent with x-auth-type api-key on /qr/*. */
export const QR_KEY: KeyKindSpec = {
  kind: "qr",
  authType: "api-key",
  tag: "qr",
  paths: "/qr/*",
  scheme: { name: "qrKey", description: "A generic-QR key (pqr_qr_…) for /qr/*, sent with x-auth-type: api-key" },
};

/** What both example operations of the explorers select of a QR. */
const QR_ANSWER = `    transactionId
    status
    expiredAt
    data { qr md5 }`;

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
    answer: { md5: "data.md5", qr: "data.qr" },
    payHint: "POST /sim/network/pay {md5}",
  },
  // The explorers' example operations (graphql/sandbox.ts): the generic QR leads, the simplest to pay on demo.
  explorer: {
    steps: [
      {
        comment: "Issue a QR (copy md5, transactionId and clientToken from the answer into the variables)",
        operation: `mutation GenerateQr($input: GenerateQrInput!) {
  generateQr(input: $input) {
${QR_ANSWER}
    clientToken
    checkoutUrl
  }
}
`,
      },
      {
        comment: 'Check it by md5 (pay it first with POST /sim/network/pay {"md5": "…"} to see SUCCESS)',
        operation: `query CheckQr($md5: String!) {
  qrTransaction(md5: $md5) {
${QR_ANSWER}
  }
}
`,
      },
    ],
    // No meta here: GraphiQL's variables editor flags any object given to a custom scalar (JSONObject) as an error,
    // though the server takes it (decision 0242); the REST example and README show meta.
    variables: {
      input: { amount: 1.5, currency: 840, expiredAfter: 120000 },
      md5: "<data.md5 from GenerateQr>",
    },
  },
  // Its upstream identifier is the QR's md5 (upstream_ref, lowercase hex): searched lowercased; the payer's bank
  // knows the payment by the network's hash, not by it. The network's report of a payment is its own `payment` key.
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
    ref: { search: "lowercased", field: "md5" },
    reference: networkHash,
    paidAt: networkPaidAt,
    payment: paymentView,
    csv: PAYMENT_COLUMNS,
  },
};
