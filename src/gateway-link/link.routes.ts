import { compact, type RestRoute } from "../rest/route-table.js";
import { namesTarget } from "./link-target.js";

/** The gateway-link area's two contract paths. */
export const LINK_ROUTES: RestRoute[] = [
  {
    path: "/gateway-link/generate-qr",
    kind: "gateway_link",
    document: `mutation($input: GenerateGatewayLinkQrInput!) { generateGatewayLinkQr(input: $input) { transactionId
      expiredAt status requestData { amount currency meta } data { qr clientId } clientToken } }`,
    variables: (b) => ({ input: b }),
    bodyVariable: "input",
    shape: compact("generateGatewayLinkQr"),
    refuseUnknown: { test: namesTarget, message: "cannot be sent: the payment link is fixed by the API key" },
  },
  {
    path: "/gateway-link/check",
    kind: "gateway_link",
    document: `query($transactionId: ID!) { gatewayLinkTransaction(transactionId: $transactionId) { transactionId
      expiredAt status requestData { amount currency meta } data { qr clientId } receiptUrl scanned } }`,
    variables: (b) => b,
    shape: compact("gatewayLinkTransaction"),
  },
];
