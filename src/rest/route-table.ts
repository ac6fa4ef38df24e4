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
  { path: "/qr/generate", kind: "qr", document: null, variables: (b) => ({ input: b }), shape: pass("generateQr") },
  { path: "/qr/check", kind: "qr", document: null, variables: (b) => b, shape: pass("qrTransaction") },
  { path: "/qr/verify", kind: "qr", document: null, variables: (b) => b, shape: pass("verifyQr") },
  { path: "/qr/decode", kind: "qr", document: null, variables: (b) => b, shape: pass("decodeQr") },
  { path: "/gateway/generate-qr", kind: "gateway", document: null, variables: (b) => ({ input: b }), shape: pass("generateGatewayQr") },
  { path: "/gateway/check-status", kind: "gateway", document: null, variables: (b) => b, shape: pass("gatewayTransaction") },
  { path: "/gateway-link/generate-qr", kind: "gateway_link", document: null, variables: (b) => ({ input: b }), shape: pass("generateGatewayLinkQr") },
  { path: "/gateway-link/check", kind: "gateway_link", document: null, variables: (b) => b, shape: pass("gatewayLinkTransaction") },
];
