import type { KeyKind } from "../auth/api-key.entity.js";
import type { ErrorCode } from "../errors.js";

/**
 * One REST path = one GraphQL operation against the one schema (docs/architecture.md). The shim adds no
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
  /**
   * Unknown body fields are ignored (docs/decisions/0094-unknown-rest-fields-ignored.md), except those this
   * refuses with 400 (docs/decisions/0095-fields-naming-a-target-refused.md).
   */
  refuseUnknown?: { test(field: string): boolean; message: string };
  /** Operation data → the contract's JSON: `pass` or `compact`, whose field the OpenAPI document reads. */
  shape: Shape;
  /** What the OpenAPI document says beyond the types (rest/openapi.ts); the schemas come from the document above. */
  doc: RouteDoc;
}

export interface RouteDoc {
  summary: string;
  description?: string;
  /** Error codes this path can answer beyond the ones every path can (bad input, key, size, rate, outage). */
  errors: ErrorCode[];
  /** A request body that runs against the demo tenant; `{{transactionId}}`/`{{md5}}`/`{{orderId}}` come from a generate. */
  example: Record<string, unknown>;
  /**
   * The JSON Schema keywords of a body field that is an operation variable (a scalar argument: `md5`), from the
   * check the service applies to it (validation/rules.ts SchemaCheck.schema), so the contract says what is checked.
   */
  argBounds?: Record<string, Record<string, unknown>>;
  /** Keywords of the whole body (which fields go together: `oneOf` required transactionId or orderId). */
  bodyBounds?: Record<string, unknown>;
}

export type Shape = ((data: Record<string, unknown>) => unknown) & { field: string; compact: boolean };

export const pass = (field: string): Shape =>
  Object.assign((data: Record<string, unknown>) => data[field], { field, compact: false });
/** Optional fields the operation did not fill are left out of the JSON rather than sent as null. */
export const compact = (field: string): Shape =>
  Object.assign(
    (data: Record<string, unknown>) =>
      Object.fromEntries(Object.entries((data[field] ?? {}) as Record<string, unknown>).filter(([, v]) => v !== null)),
    { field, compact: true },
  );
