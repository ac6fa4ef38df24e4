import { compact, type RestRoute } from "../rest/route-table.js";
import { namesTarget } from "./link-target.js";
import { LINK_KEY } from "./area.js";
import { IDENTIFIER } from "../validation/rules.js";

/** The gateway-link area's two contract paths. */
export const LINK_ROUTES: RestRoute[] = [
  {
    path: "/gateway-link/generate-qr",
    kind: LINK_KEY.kind,
    document: `mutation($input: GenerateGatewayLinkQrInput!) { generateGatewayLinkQr(input: $input) { transactionId
      expiredAt status requestData { amount currency meta } data { qr clientId } deeplink clientToken checkoutUrl } }`,
    variables: (b) => ({ input: b }),
    bodyVariable: "input",
    shape: compact("generateGatewayLinkQr"),
    doc: {
      summary: "Generate a QR through the key's payment link (expires after exactly 180 s)",
      description:
        "The link URL is fixed by the key: a body naming a target URL is refused with 400. A merchant over its share " +
        "of the worker's browser pages (LINK_OPENS_PER_MERCHANT, LINK_HELD_PAGES_PER_MERCHANT and per configuration) " +
        "is answered 429 with retry-after, and nothing is stored. A request the link itself refuses — an amount other " +
        "than its fixed amount or outside its minimum and maximum, a field it requires (remark, payerName, payerEmail, " +
        "payerPhone) missing — answers 400 naming it, and nothing is stored.",
      errors: ["UPSTREAM_UNAVAILABLE", "IDEMPOTENCY_CONFLICT"],
      example: { amount: 5000, currency: 116, meta: { orderRef: "L-77" } },
    },
    refuseUnknown: { test: namesTarget, message: "cannot be sent: the payment link is fixed by the API key" },
  },
  {
    path: "/gateway-link/check",
    kind: LINK_KEY.kind,
    document: `query($transactionId: ID!) { gatewayLinkTransaction(transactionId: $transactionId) { transactionId
      expiredAt status requestData { amount currency meta } data { qr clientId } deeplink receiptUrl scanned
      failureReason } }`,
    variables: (b) => b,
    shape: compact("gatewayLinkTransaction"),
    doc: {
      summary: "The locally monitored state of a gateway-link transaction",
      errors: ["NOT_FOUND"],
      example: { transactionId: "{{transactionId}}" },
      argBounds: { transactionId: IDENTIFIER.schema },
    },
  },
];
