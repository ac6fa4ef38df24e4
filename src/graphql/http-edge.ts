import type { Server } from "node:http";
import { ApolloServer, type ApolloServerPlugin } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { ApolloServerPluginCacheControlDisabled } from "@apollo/server/plugin/disabled";
import { ApolloServerPluginLandingPageLocalDefault } from "@apollo/server/plugin/landingPage/default";
import { expressMiddleware } from "@as-integrations/express5";
import type { RequestHandler } from "express";
import { execute, GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from "graphql";
import { randomUUID } from "node:crypto";
import type { GqlContext } from "./context.js";
import { formatGraphQLError } from "./errors.js";
import { stringifyExact } from "../exact-json.js";
import type { SandboxExample } from "./sandbox.js";
import { withExplorerLink } from "./explorer.js";
import type { FailureLog, GraphQLEdge } from "./edge.js";
import type { GraphQLAdmission } from "./admission.js";

// The HTTP edge of /graphql: Apollo Server with the service's operation checks and response rules, the express
// middleware in front of it, and the REST shim's direct runner (graphql-js without Apollo's pipeline).

export interface OperationLimits {
  maxCost: number;
  maxResponseBytes: number;
  timeBudgetMs: number;
}

export interface ApolloEdgeDeps {
  admission: GraphQLAdmission;
  httpServer: Server;
  introspection: boolean;
  /** What Sandbox opens with (where introspection is on). */
  sandbox: SandboxExample;
  exposeInternals: boolean;
  limits: OperationLimits;
  logFailure: FailureLog;
  /** Called when Apollo drains the HTTP server: the websocket edge's cleanup. */
  drainSockets: () => Promise<void>;
}

/** When an operation answered nothing and every error has one of these codes, the HTTP status says so too. */
const NOTHING_ANSWERED_STATUS: Record<string, number> = { UNAUTHENTICATED: 401, BAD_USER_INPUT: 400, FORBIDDEN: 403 };

/** Apollo Server 5 for /graphql over HTTP (not started). */
export function createApollo(deps: ApolloEdgeDeps): ApolloServer<GqlContext> {
  /** Responses measured in willSendResponse, so stringifyResult does not serialise them a second time. */
  const serialised = new WeakMap<object, string>();
  return new ApolloServer<GqlContext>({
    schema: deps.admission.schema,
    // Apollo parses and validates with graphql-js's rules; the edge's limits are the admission's (admission.ts).
    validationRules: [deps.admission.limitsRule],
    introspection: deps.introspection,
    allowBatchedHttpRequests: false,
    // "Did you mean …?" suggestions name fields and types: off where introspection is (production).
    hideSchemaDetailsFromClientErrors: !deps.introspection,
    // main.ts owns SIGTERM/SIGINT and stops Apollo through app.stop(). Apollo's own handler would start a
    // second, concurrent stop(), and in 5.5.1 a concurrent stop() never settles (its barrier is resolved only
    // on error), so every shutdown waited for main.ts's 30 s force-exit and ended with code 1.
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    stringifyResult: (value) => {
      const known = value.data != null ? serialised.get(value.data) : undefined;
      return `${known ?? stringifyExact(value)}\n`;
    },
    formatError: (formatted, error) => {
      const f = formatGraphQLError(formatted, error, deps.exposeInternals);
      deps.logFailure(
        f,
        error instanceof GraphQLError ? (error.originalError ?? error) : error,
        formatted.path,
        "a GraphQL operation",
      );
      return f;
    },
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer: deps.httpServer }),
      operationRules(deps.admission, deps.limits, serialised),
      // The default cache-control plugin wraps every field resolver to collect hints; no type declares any,
      // so it only cost time on every field of every operation (REST included).
      ApolloServerPluginCacheControlDisabled(),
      // Sandbox opens with an example of every kind of operation (graphql/sandbox.ts); production keeps Apollo's default.
      ...(deps.introspection ? [landingPage(deps.sandbox)] : []),
      {
        async serverWillStart() {
          return {
            async drainServer() {
              await deps.drainSockets();
            },
          };
        },
      },
    ],
  });
}

function landingPage(sandbox: SandboxExample): ApolloServerPlugin<GqlContext> {
  return withExplorerLink(
    ApolloServerPluginLandingPageLocalDefault({
      document: sandbox.document,
      variables: sandbox.variables,
      headers: sandbox.headers,
      includeCookies: false,
      embed: true,
    }),
  );
}

/**
 * The per-operation rules of HTTP: the admission's verdict (no subscriptions, the checkout view for client tokens,
 * the cost budget), the time budget, the response-size cap, and the status of an answer that answered nothing.
 */
function operationRules(
  admission: GraphQLAdmission,
  limits: OperationLimits,
  serialised: WeakMap<object, string>,
): ApolloServerPlugin<GqlContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ contextValue, document, request }) {
          const refusal = admission.operation({
            document,
            operationName: request.operationName,
            variables: request.variables,
            principal: contextValue.principal,
            transport: "http",
          });
          if (refusal !== null) throw refusal;
        },
        // The time budget: once it is spent, every field still to resolve fails at once (what was
        // resolved is kept), so an operation cannot hold the process for longer than GRAPHQL_TIME_BUDGET_MS.
        // A mutation's answer is spared: its work is done (a payment page may take 45 s to give its QR), and
        // cutting the answer would lose what it made; a further mutation of the operation is still refused.
        async executionDidStart() {
          const deadline = Date.now() + limits.timeBudgetMs;
          return {
            willResolveField({ info }) {
              if (Date.now() <= deadline) return;
              if (info.operation.operation === "mutation" && info.path.prev !== undefined) return;
              throw new GraphQLError(
                `The operation ran over its time budget of ${limits.timeBudgetMs} ms (GRAPHQL_TIME_BUDGET_MS)`,
                { extensions: { code: "BAD_USER_INPUT" } },
              );
            },
          };
        },
        async willSendResponse({ response }) {
          if (response.body.kind !== "single") return;
          const answer = shapeAnswer(response.body.singleResult, limits.maxResponseBytes, serialised);
          if (answer.replaced !== undefined) response.body.singleResult = answer.replaced;
          if (answer.status !== undefined) response.http.status = answer.status;
        },
      };
    },
  };
}

type SingleResult = {
  data?: Record<string, unknown> | null;
  errors?: readonly GraphQLFormattedError[];
  extensions?: Record<string, unknown>;
};

/**
 * The response-size cap (measured once here: stringifyResult reuses the text), and Apollo's convention: a request
 * refused for its credentials answers 401 (and one refused for its input 400), not 200 with an error
 * (docs/decisions/0133-graphql-response-size-and-time-budget.md,
 * docs/decisions/0134-http-status-of-graphql-errors.md). Only when nothing was answered: partial data keeps 200.
 */
function shapeAnswer(
  r: SingleResult,
  maxResponseBytes: number,
  serialised: WeakMap<object, string>,
): { replaced?: SingleResult; status?: number } {
  // In the order Apollo writes it (errors, data, extensions).
  const text = stringifyExact({ errors: r.errors, data: r.data, extensions: r.extensions });
  if (Buffer.byteLength(text) > maxResponseBytes) {
    const message =
      `The response is larger than ${maxResponseBytes} bytes (GRAPHQL_MAX_RESPONSE_BYTES); ` +
      "ask for fewer rows (first) or fewer fields";
    return { replaced: { errors: [{ message, extensions: { code: "BAD_USER_INPUT", details: [] } }] }, status: 400 };
  }
  if (r.data != null) serialised.set(r.data, text);
  const { errors, data } = r;
  const code = errors?.[0]?.extensions?.code;
  if (
    typeof code === "string" &&
    code in NOTHING_ANSWERED_STATUS &&
    errors!.every((e) => e.extensions?.code === code) &&
    (data == null || Object.values(data).every((v) => v === null))
  )
    return { status: NOTHING_ANSWERED_STATUS[code] };
  return {};
}

/**
 * The express handler of /graphql: a document nested too deeply is refused before Apollo parses it; the rest
 * goes to Apollo with a context built from the request's headers.
 */
export function graphqlMiddleware(
  apollo: ApolloServer<GqlContext>,
  admission: GraphQLAdmission,
  contextFor: GraphQLEdge["contextFor"],
): RequestHandler {
  const apolloMiddleware = expressMiddleware(apollo, {
    context: async ({ req }) => contextFor(req.headers, (req as unknown as { id?: string }).id ?? randomUUID()),
  });
  return (req, res, next) => {
    const query: unknown = (req.body as { query?: unknown } | undefined)?.query ?? req.query?.query;
    const tooDeep = typeof query === "string" ? admission.tooDeep(query) : null;
    if (tooDeep !== null) {
      res
        .status(400)
        .json({ errors: [{ message: tooDeep.message, extensions: { code: "BAD_USER_INPUT", details: [] } }] });
      return;
    }
    return apolloMiddleware(req, res, next);
  };
}

/**
 * The REST shim's runner. Its documents are constants, parsed and validated once, so it runs them straight through
 * graphql-js: Apollo's per-request pipeline (query hash, plugin hooks, response assembly) was a tenth of a generate
 * request's CPU. Errors go through the same formatter with Apollo's defaults: a variable coercion failure
 * (execution never started, so no `data`) is BAD_USER_INPUT, a code-less error INTERNAL_SERVER_ERROR (which the
 * formatter turns into INTERNAL).
 */
export function directRunner(
  schema: GraphQLSchema,
  exposeInternals: boolean,
  logFailure: FailureLog,
): GraphQLEdge["run"] {
  return async (document, variables, ctx) => {
    const result = await execute({ schema, document, variableValues: variables, contextValue: ctx });
    if (!result.errors?.length) return { data: result.data };
    const fallback = "data" in result ? "INTERNAL_SERVER_ERROR" : "BAD_USER_INPUT";
    const errors = result.errors.map((e) => {
      const f = formatGraphQLError(
        { ...e.toJSON(), extensions: { ...e.extensions, code: e.extensions.code ?? fallback } },
        e,
        exposeInternals,
      );
      logFailure(f, e.originalError ?? e, e.path, "a REST operation");
      return f;
    });
    return { data: result.data, errors };
  };
}
