import type { KeyKind } from "../auth/api-key.entity.js";
import { namesTarget } from "../gateway-link/link-target.js";

/**
 * One REST path = one GraphQL operation against the one schema (DESIGN.md "Shape"). The shim adds no
 * business rules: it authenticates the key kind, passes the body as variables, and shapes the JSON.
 */
export interface RestRoute {
  path: string;
  kind: KeyKind;
  /** The GraphQL document executed; null while the area is not built (answers 501). */
  document: string | null;
  /** Body → operation variables. */
  variables(body: Record<string, unknown>): Record<string, unknown>;
  /** The variable the whole body fills (its fields are the body's); absent: the body's fields are the variables. */
  bodyVariable?: string;
  /** Unknown body fields are ignored (decisions.md, legacy compatibility), except those this refuses with 400. */
  refuseUnknown?: { test(field: string): boolean; message: string };
  /** Operation data → the contract's JSON. */
  shape(data: Record<string, unknown>): unknown;
}

const pass = (field: string) => (data: Record<string, unknown>) => data[field];
/** Optional fields the operation did not fill are left out of the JSON rather than sent as null. */
const compact = (field: string) => (data: Record<string, unknown>) =>
  Object.fromEntries(Object.entries((data[field] ?? {}) as Record<string, unknown>).filter(([, v]) => v !== null));

export const ROUTES: RestRoute[] = [
  { path: "/qr/generate", kind: "qr", document: `mutation($input: GenerateQrInput!) { generateQr(input: $input) { transactionId expiredAt status requestData { amount currency expiredAfter meta } data { qr md5 } clientToken } }`, variables: (b) => ({ input: b }), bodyVariable: "input", shape: compact("generateQr") },
  { path: "/qr/check", kind: "qr", document: `query($md5: String!) { qrTransaction(md5: $md5) { transactionId status data { qr md5 } requestData { meta amount currency expiredAfter } expiredAt } }`, variables: (b) => b, shape: pass("qrTransaction") },
  { path: "/qr/verify", kind: "qr", document: `query($qrData: String!) { verifyQr(qrData: $qrData) }`, variables: (b) => b, shape: pass("verifyQr") },
  { path: "/qr/decode", kind: "qr", document: `query($qrData: String!) { decodeQr(qrData: $qrData) { status { code errorCode message } data } }`, variables: (b) => b, shape: pass("decodeQr") },
  { path: "/gateway/generate-qr", kind: "gateway", document: `mutation($input: GenerateGatewayQrInput!) { generateGatewayQr(input: $input) { transactionId orderId qrString qrImage deeplink appStore playStore amount currency status gatewayStatus { code message } expiresAt clientToken } }`, variables: (b) => ({ input: b }), bodyVariable: "input", shape: compact("generateGatewayQr") },
  { path: "/gateway/check-status", kind: "gateway", document: `query($transactionId: ID, $orderId: String) { gatewayTransaction(transactionId: $transactionId, orderId: $orderId) { transactionId orderId status amount currency expiredAt createdAt } }`, variables: (b) => b, shape: pass("gatewayTransaction") },
  { path: "/gateway-link/generate-qr", kind: "gateway_link", document: `mutation($input: GenerateGatewayLinkQrInput!) { generateGatewayLinkQr(input: $input) { transactionId expiredAt status requestData { amount currency meta } data { qr clientId } clientToken } }`, variables: (b) => ({ input: b }), bodyVariable: "input", shape: compact("generateGatewayLinkQr"),
    refuseUnknown: { test: namesTarget, message: "cannot be sent: the payment link is fixed by the API key" } },
  { path: "/gateway-link/check", kind: "gateway_link", document: `query($transactionId: ID!) { gatewayLinkTransaction(transactionId: $transactionId) { transactionId expiredAt status requestData { amount currency meta } data { qr clientId } receiptUrl scanned } }`, variables: (b) => b, shape: compact("gatewayLinkTransaction") },
];
