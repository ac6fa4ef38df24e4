import type { GraphQLError, GraphQLFormattedError } from "graphql";
import { stringifyExact } from "../exact-json.js";
import { formatGraphQLError } from "./errors.js";
import type { FailureLog } from "./edge.js";

// How a GraphQL answer over HTTP is shaped, the same whichever runs it (Apollo's pipeline or the direct executor of
// http-direct.ts and the REST shim): errors formatted as Apollo formats them, then the service's formatter; the
// response-size cap; and the status of an answer that answered nothing.

/** When an operation answered nothing and every error has one of these codes, the HTTP status says so too. */
const NOTHING_ANSWERED_STATUS: Record<string, number> = { UNAUTHENTICATED: 401, BAD_USER_INPUT: 400, FORBIDDEN: 403 };

export type SingleResult = {
  data?: Record<string, unknown> | null;
  errors?: readonly GraphQLFormattedError[];
  extensions?: Record<string, unknown>;
};

/**
 * An execution error as Apollo Server hands it to its formatError (a code where it had none, `fallbackCode`; the
 * `http` extension taken off: it sets the status, `status` here), then the service's formatter, the failure logged.
 */
export function formatExecutionError(
  e: GraphQLError,
  fallbackCode: string,
  exposeInternals: boolean,
  logFailure: FailureLog,
  where: string,
): { formatted: GraphQLFormattedError; status?: number } {
  const { http, ...extensions } = e.extensions as { http?: { status?: unknown } } & Record<string, unknown>;
  const formatted = formatGraphQLError(
    { ...e.toJSON(), extensions: { ...extensions, code: extensions.code ?? fallbackCode } },
    e,
    exposeInternals,
  );
  logFailure(formatted, e.originalError ?? e, e.path, where);
  return { formatted, status: typeof http?.status === "number" ? http.status : undefined };
}

/**
 * The response-size cap (measured once here: the text is the answer's), and Apollo's convention: a request refused
 * for its credentials answers 401 (and one refused for its input 400), not 200 with an error
 * (docs/decisions/0133-graphql-response-size-and-time-budget.md, docs/decisions/0134-http-status-of-graphql-errors.md).
 * Only when nothing was answered: partial data keeps 200.
 */
export function shapeAnswer(
  r: SingleResult,
  maxResponseBytes: number,
): { text: string; replaced?: SingleResult; status?: number } {
  // In the order Apollo writes it (errors, data, extensions).
  const text = stringifyExact({ errors: r.errors, data: r.data, extensions: r.extensions });
  if (Buffer.byteLength(text) > maxResponseBytes) {
    const message =
      `The response is larger than ${maxResponseBytes} bytes (GRAPHQL_MAX_RESPONSE_BYTES); ` +
      "ask for fewer rows (first) or fewer fields";
    const replaced = { errors: [{ message, extensions: { code: "BAD_USER_INPUT", details: [] } }] };
    return { text: stringifyExact(replaced), replaced, status: 400 };
  }
  const { errors, data } = r;
  const code = errors?.[0]?.extensions?.code;
  if (
    typeof code === "string" &&
    code in NOTHING_ANSWERED_STATUS &&
    errors!.every((e) => e.extensions?.code === code) &&
    (data == null || Object.values(data).every((v) => v === null))
  )
    return { text, status: NOTHING_ANSWERED_STATUS[code] };
  return { text };
}
