import type { KeyKind } from "../auth/api-key.entity.js";

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
  /** Operation data → the contract's JSON. */
  shape(data: Record<string, unknown>): unknown;
}

const pass = (field: string) => (data: Record<string, unknown>) => data[field];

export const ROUTES: RestRoute[] = [
  { path: "/qr/generate", kind: "qr", document: `mutation($input: GenerateQrInput!) { generateQr(input: $input) { transactionId expiredAt status requestData { amount currency expiredAfter meta } data { qr md5 } clientToken } }`, variables: (b) => ({ input: b }), shape: pass("generateQr") },
  { path: "/qr/check", kind: "qr", document: `query($md5: String!) { qrTransaction(md5: $md5) { transactionId status data { qr md5 } requestData { meta amount currency expiredAfter } expiredAt } }`, variables: (b) => b, shape: pass("qrTransaction") },
  { path: "/qr/verify", kind: "qr", document: `query($qrData: String!) { verifyQr(qrData: $qrData) }`, variables: (b) => b, shape: pass("verifyQr") },
  { path: "/qr/decode", kind: "qr", document: `query($qrData: String!) { decodeQr(qrData: $qrData) { status { code errorCode message } data } }`, variables: (b) => b, shape: pass("decodeQr") },
  { path: "/gateway/generate-qr", kind: "gateway", document: null, variables: (b) => ({ input: b }), shape: pass("generateGatewayQr") },
  { path: "/gateway/check-status", kind: "gateway", document: null, variables: (b) => b, shape: pass("gatewayTransaction") },
  { path: "/gateway-link/generate-qr", kind: "gateway_link", document: null, variables: (b) => ({ input: b }), shape: pass("generateGatewayLinkQr") },
  { path: "/gateway-link/check", kind: "gateway_link", document: null, variables: (b) => b, shape: pass("gatewayLinkTransaction") },
];
