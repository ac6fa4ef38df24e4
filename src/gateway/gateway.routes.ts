import { compact, pass, type RestRoute } from "../rest/route-table.js";
import { GATEWAY_KEY } from "./area.js";
import { IDENTIFIER } from "../validation/rules.js";

/** The hosted gateway area's two contract paths. */
export const GATEWAY_ROUTES: RestRoute[] = [
  {
    path: "/gateway/generate-qr",
    kind: GATEWAY_KEY.kind,
    document: `mutation($input: GenerateGatewayQrInput!) { generateGatewayQr(input: $input) { transactionId orderId
      qrString qrImage deeplink appStore playStore amount currency status gatewayStatus { code message } expiresAt
      clientToken checkoutUrl } }`,
    variables: (b) => ({ input: b }),
    bodyVariable: "input",
    shape: compact("generateGatewayQr"),
    doc: {
      summary: "Generate a hosted gateway QR (status CHECKOUT)",
      description: "A duplicate orderId or a rejection by the gateway answer 400; an unreachable gateway 502.",
      errors: ["CONFLICT", "UPSTREAM_REJECTED", "UPSTREAM_UNAVAILABLE", "IDEMPOTENCY_CONFLICT"],
      example: { qrData: { orderId: "{{orderId}}", amount: 2.5, currency: "USD" }, metaData: { table: "7" } },
    },
  },
  {
    path: "/gateway/check-status",
    kind: GATEWAY_KEY.kind,
    document: `query($transactionId: ID, $orderId: String) { gatewayTransaction(transactionId: $transactionId,
      orderId: $orderId) { transactionId orderId status amount currency expiredAt createdAt } }`,
    variables: (b) => b,
    shape: pass("gatewayTransaction"),
    doc: {
      summary: "Status of a hosted gateway transaction, by transactionId or orderId (send one)",
      errors: ["NOT_FOUND"],
      example: { transactionId: "{{transactionId}}" },
      argBounds: { transactionId: IDENTIFIER.schema, orderId: IDENTIFIER.schema },
      // The service answers 400 unless exactly one is sent (gateway-service.ts status).
      bodyBounds: { oneOf: [{ required: ["transactionId"] }, { required: ["orderId"] }] },
    },
  },
];
