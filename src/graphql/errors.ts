import { GraphQLError, type GraphQLFormattedError } from "graphql";
import { AppError, type ErrorCode, type FieldError } from "../errors.js";
import { databaseUnavailable } from "../db/unavailable.js";

export const UNAVAILABLE_MESSAGE = "The service cannot reach its database; retry shortly";

export const HTTP_STATUS: Record<ErrorCode, number> = {
  BAD_USER_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403, // a client token asking for more than the checkout view
  NOT_FOUND: 404,
  CONFLICT: 400, // the contract answers a duplicate orderId with 400
  UPSTREAM_REJECTED: 400,
  UPSTREAM_UNAVAILABLE: 502,
  RATE_LIMITED: 429,
  IDEMPOTENCY_CONFLICT: 409,
  NOT_IMPLEMENTED: 501,
  METHOD_NOT_ALLOWED: 405, // another method than POST on a REST contract path
  // the database is unreachable: retry later (docs/decisions/0083-database-outages-answer-503.md)
  SERVICE_UNAVAILABLE: 503,
  INTERNAL: 500,
};

const KNOWN = new Set(Object.keys(HTTP_STATUS));

/**
 * Apollo's and graphql-js's codes for a request that cannot run as sent (syntax, validation, unknown
 * operationName, persisted-query hash not known, introspection off): all BAD_USER_INPUT. The message is
 * kept, so Apollo Client's persisted-query link still recognises "PersistedQueryNotFound".
 */
const REQUEST_ERROR_CODES = new Set([
  "GRAPHQL_VALIDATION_FAILED",
  "GRAPHQL_PARSE_FAILED",
  "BAD_USER_INPUT",
  "BAD_REQUEST",
  "OPERATION_RESOLUTION_FAILURE",
  "PERSISTED_QUERY_NOT_FOUND",
  "PERSISTED_QUERY_NOT_SUPPORTED",
  "INTROSPECTION_DISABLED",
  "MAX_RECURSIVE_SELECTIONS_EXCEEDED",
]);

/**
 * The field named by graphql-js coercion messages, relative to the REST body:
 * `Variable "$input" got invalid value "x" at "input.amount"; …` → amount; `Variable "$md5" of required type …` → md5.
 */
function fieldFromMessage(message: string): FieldError | null {
  const varName = /Variable "\$(\w+)"/.exec(message)?.[1];
  if (varName === undefined) return null;
  let path = /at "([^"]+)"/.exec(message)?.[1] ?? varName;
  if (path === "input") path = "";
  else if (path.startsWith("input.")) path = path.slice(6);
  const missing = /Field "([^"]+)" of required type "[^"]+" was not provided/.exec(message);
  const unknown = /Field "([^"]+)" is not defined by type/.exec(message);
  const name = missing?.[1] ?? unknown?.[1];
  const field = name !== undefined ? (path ? `${path}.${name}` : name) : path || varName;
  let reason = message.replace(/^Variable "\$\w+" (got invalid value .*?(?: at "[^"]+")?; )?/, "").replace(/\.$/, "");
  if (missing || /of required type .* was not provided/.test(message)) reason = "is required";
  else if (unknown) reason = "is not a known field";
  return { field, message: reason || "is invalid" };
}

/**
 * One translation from thrown values to `extensions.code` (docs/api.md). Unknown errors become
 * INTERNAL with a generic message: no stack traces or SQL leave the process.
 */
export function formatGraphQLError(
  formatted: GraphQLFormattedError,
  error: unknown,
  exposeInternals: boolean,
): GraphQLFormattedError {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof AppError) {
    return {
      message: original.message,
      path: formatted.path,
      locations: formatted.locations,
      extensions: { code: original.code, details: original.details, ...original.extra },
    };
  }
  const code = formatted.extensions?.code;
  if (typeof code === "string" && REQUEST_ERROR_CODES.has(code)) {
    const detail = fieldFromMessage(formatted.message);
    return {
      message: formatted.message,
      locations: formatted.locations,
      extensions: { code: "BAD_USER_INPUT", details: detail ? [detail] : [] },
    };
  }
  // graphql-js's own request errors (e.g. "Too many errors processing variables") carry no code of their own
  // (Apollo fills in INTERNAL_SERVER_ERROR), no path and no original error: they are about the request, not
  // a failure while resolving it.
  if (
    (code === undefined || code === "INTERNAL_SERVER_ERROR") &&
    error instanceof GraphQLError &&
    error.originalError === undefined &&
    error.path === undefined
  ) {
    return {
      message: formatted.message,
      locations: formatted.locations,
      extensions: { code: "BAD_USER_INPUT", details: [] },
    };
  }
  // An argument graphql-js refused while executing: a nullable variable given null where the argument is
  // non-null with a default (validation lets that through, the spec allows it), or a literal it cannot coerce.
  const refused =
    error instanceof GraphQLError &&
    error.originalError instanceof GraphQLError &&
    error.originalError.originalError === undefined
      ? error.originalError
      : null;
  const argument = refused === null ? null : /^Argument "(\w+)" (.*?)\.?$/.exec(refused.message);
  if (argument !== null) {
    return {
      message: formatted.message,
      path: formatted.path,
      locations: formatted.locations,
      extensions: { code: "BAD_USER_INPUT", details: [{ field: argument[1], message: argument[2] }] },
    };
  }
  if (typeof code === "string" && KNOWN.has(code) && code !== "INTERNAL") {
    return {
      message: formatted.message,
      path: formatted.path,
      extensions: { code, details: formatted.extensions?.details ?? [] },
    };
  }
  if (databaseUnavailable(original))
    return {
      message: UNAVAILABLE_MESSAGE,
      path: formatted.path,
      extensions: { code: "SERVICE_UNAVAILABLE", details: [] },
    };
  return {
    message: exposeInternals ? formatted.message : "Internal error",
    path: formatted.path,
    extensions: { code: "INTERNAL", details: [] },
  };
}

export function httpStatusFor(code: unknown): number {
  return typeof code === "string" && code in HTTP_STATUS ? HTTP_STATUS[code as ErrorCode] : 500;
}
