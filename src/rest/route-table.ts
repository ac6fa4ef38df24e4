import type { KeyKind } from "../auth/api-key.entity.js";

/**
 * One REST path = one GraphQL operation against the one schema (DESIGN.md "Shape"). The shim adds no
 * business rules: it authenticates the key kind, passes the body as variables, and shapes the JSON. Each
 * area module declares its own routes; app.ts mounts what the modules declare.
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

export const pass = (field: string) => (data: Record<string, unknown>) => data[field];
/** Optional fields the operation did not fill are left out of the JSON rather than sent as null. */
export const compact = (field: string) => (data: Record<string, unknown>) =>
  Object.fromEntries(Object.entries((data[field] ?? {}) as Record<string, unknown>).filter(([, v]) => v !== null));
