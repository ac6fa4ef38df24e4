import { compact, pass, type RestRoute } from "../rest/route-table.js";

/** The hosted gateway area's two contract paths. */
export const GATEWAY_ROUTES: RestRoute[] = [
  {
    path: "/gateway/generate-qr",
    kind: "gateway",
    document: `mutation($input: GenerateGatewayQrInput!) { generateGatewayQr(input: $input) { transactionId orderId
      qrString qrImage deeplink appStore playStore amount currency status gatewayStatus { code message } expiresAt clientToken } }`,
    variables: (b) => ({ input: b }),
    bodyVariable: "input",
    shape: compact("generateGatewayQr"),
  },
  {
    path: "/gateway/check-status",
    kind: "gateway",
    document: `query($transactionId: ID, $orderId: String) { gatewayTransaction(transactionId: $transactionId,
      orderId: $orderId) { transactionId orderId status amount currency expiredAt createdAt } }`,
    variables: (b) => b,
    shape: pass("gatewayTransaction"),
  },
];
