import type { Server } from "node:http";
import { ApolloServer, type ApolloServerPlugin } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { ApolloServerPluginCacheControlDisabled } from "@apollo/server/plugin/disabled";
import { ApolloServerPluginLandingPageLocalDefault } from "@apollo/server/plugin/landingPage/default";
import { expressMiddleware } from "@as-integrations/express5";
import type { Request, RequestHandler } from "express";
import { execute, GraphQLError, type GraphQLSchema } from "graphql";
import { randomUUID } from "node:crypto";
import type { GqlContext } from "./context.js";
import { formatGraphQLError } from "./errors.js";
import { stringifyExact } from "../exact-json.js";
import type { SandboxExample } from "./sandbox.js";
import { withExplorerLink } from "./explorer.js";
import type { FailureLog, GraphQLEdge } from "./edge.js";
import type { GraphQLAdmission } from "./admission.js";
import { formatExecutionError, shapeAnswer } from "./answer.js";
import { answerDirect, directRequest, type DirectDeps } from "./http-direct.js";

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
    // commands.ts owns SIGTERM/SIGINT and stops Apollo through app.stop(). Apollo's own handler would start a
    // second, concurrent stop(), and in 5.5.1 a concurrent stop() never settles (its barrier is resolved only
    // on error), so every shutdown waited for commands.ts's 30 s force-exit and ended with code 1.
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
 * the cost budget), the response-size cap, and the status of an answer that answered nothing. The time budget is the
 * context's deadline, judged by every field (field-gate.ts).
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
          // Apollo validated it with the admission's rules: the direct door runs this text from now on (http-direct.ts).
          if (request.query !== undefined) admission.remember(request.query, document);
          const refusal = admission.operation({
            document,
            operationName: request.operationName,
            variables: request.variables,
            principal: contextValue.principal,
            transport: "http",
          });
          if (refusal !== null) throw refusal;
        },
        async willSendResponse({ response }) {
          if (response.body.kind !== "single") return;
          const result = response.body.singleResult;
          const answer = shapeAnswer(result, limits.maxResponseBytes);
          if (answer.replaced !== undefined) response.body.singleResult = answer.replaced;
          else if (result.data != null) serialised.set(result.data, answer.text);
          if (answer.status !== undefined) response.http.status = answer.status;
        },
      };
    },
  };
}

/**
 * The express handler of /graphql: a document nested too deeply is refused before anything parses it; a plain POST
 * runs through the direct door (http-direct.ts); the rest, and whatever the direct door declines, goes to Apollo.
 * Either way the context is built once from the request's headers, with the operation's time budget.
 */
export function graphqlMiddleware(
  apollo: ApolloServer<GqlContext>,
  direct: DirectDeps,
  contextFor: GraphQLEdge["contextFor"],
): RequestHandler {
  const { admission } = direct;
  const budgetMs = direct.limits.timeBudgetMs;
  const requestId = (req: Request) => (req as unknown as { id?: string }).id ?? randomUUID();
  const apolloMiddleware = expressMiddleware(apollo, {
    context: async ({ req }) => {
      const ctx = await contextFor(req.headers, requestId(req));
      ctx.deadline = { at: Date.now() + budgetMs, budgetMs };
      return ctx;
    },
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
    const request = directRequest(req);
    if (request === null) return apolloMiddleware(req, res, next);
    contextFor(req.headers, requestId(req))
      .then((ctx) => answerDirect(direct, request, ctx, res))
      .then((answered) => (answered ? undefined : apolloMiddleware(req, res, next)))
      .catch(next);
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
    const errors = result.errors.map(
      (e) => formatExecutionError(e, fallback, exposeInternals, logFailure, "a REST operation").formatted,
    );
    return { data: result.data, errors };
  };
}
