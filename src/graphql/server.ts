import type { Server } from "node:http";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { ApolloServerPluginCacheControlDisabled } from "@apollo/server/plugin/disabled";
import { expressMiddleware } from "@as-integrations/express5";
import { WebSocketServer } from "ws";
import { useServer } from "graphql-ws/use/ws";
import type { RequestHandler } from "express";
import {
  execute,
  GraphQLError,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLFormattedError,
  type GraphQLSchema,
} from "graphql";
import { randomUUID } from "node:crypto";
import type { Logger } from "../logger.js";
import type { Principal } from "../auth/principal.js";
import type { ResolverContainer } from "./container.js";
import { credentialsFromConnectionParams, credentialsFromHeaders } from "../auth/credentials.js";
import type { GqlContext } from "./context.js";
import { formatGraphQLError } from "./errors.js";
import { limitsRule } from "./limits.js";
import { documentNesting, MAX_DOCUMENT_NESTING, tooDeepMessage } from "./nesting.js";
import { exactReplacer, spliceExact, stringifyExact } from "../exact-json.js";

export interface GraphQLEdge {
  schema: GraphQLSchema;
  apollo: ApolloServer<GqlContext>;
  middleware: RequestHandler;
  contextFor(headers: Record<string, string | string[] | undefined>, requestId: string): Promise<GqlContext>;
  /** Parses and validates a fixed document once (the REST shim's eight); throws when it is not valid. */
  prepare(source: string): DocumentNode;
  /** Executes a prepared document against the schema, errors formatted exactly as Apollo formats them. */
  run(
    document: DocumentNode,
    variables: Record<string, unknown>,
    ctx: GqlContext,
  ): Promise<{ data?: Record<string, unknown> | null; errors?: GraphQLFormattedError[] }>;
  dispose(): Promise<void>;
}

/** Apollo Server 5 on express at /graphql, graphql-ws on the same server and path. */
export interface GraphQLEdgeDeps {
  auth: {
    fromCredentials(c: {
      apiKey?: string;
      authType?: string;
      bearer?: string;
      clientToken?: string;
    }): Promise<Principal>;
  };
  logger: Logger;
  container: ResolverContainer;
  /** Messages of internal errors reach the client (development with debug logs only). */
  exposeInternals: boolean;
  introspection: boolean;
}

export async function createGraphQLEdge(
  schema: GraphQLSchema,
  httpServer: Server,
  deps: GraphQLEdgeDeps,
): Promise<GraphQLEdge> {
  const { auth, logger, container, exposeInternals } = deps;
  /** The client sees a generic message; the cause is logged so a 500 (or a 503: database unreachable) is never silent. */
  const logFailure = (f: GraphQLFormattedError, err: unknown, path: unknown, where: string) => {
    if (f.extensions?.code === "INTERNAL") logger.error({ err, path }, `internal error in ${where}`);
    else if (f.extensions?.code === "SERVICE_UNAVAILABLE")
      logger.warn({ err, path }, `service unavailable during ${where}`);
  };
  const contextFor = async (
    headers: Record<string, string | string[] | undefined>,
    requestId: string,
  ): Promise<GqlContext> => {
    const idem = headers["idempotency-key"];
    return {
      principal: await auth.fromCredentials(credentialsFromHeaders(headers)),
      container,
      requestId,
      idempotencyKey: Array.isArray(idem) ? idem[0] : idem,
    };
  };

  const limits = limitsRule(12, 500);
  const rules = [...specifiedRules, limits];
  // Frames are capped like HTTP bodies (64 KiB); ws would take 100 MiB by default. Over the cap: close 1009.
  const wss = new WebSocketServer({ server: httpServer, path: "/graphql", maxPayload: 64 * 1024 });
  // meta goes out exactly as it was read (src/exact-json.ts): graphql-ws stringifies with exactReplacer, which
  // leaves markers that each socket's send replaces by the exact text.
  wss.on("connection", (socket) => {
    const send = socket.send.bind(socket) as (data: unknown, cb?: (err?: Error) => void) => void;
    (socket as unknown as { send: typeof send }).send = (data, cb) =>
      send(typeof data === "string" ? spliceExact(data) : data, cb);
  });
  const wsCleanup = useServer<Record<string, unknown>, { ctx?: GqlContext }>(
    {
      schema,
      jsonMessageReplacer: exactReplacer,
      validate: (sch, doc) => validate(sch, doc, rules),
      onSubscribe: (_ctx, _id, payload) => {
        const nesting = documentNesting(payload.query);
        if (nesting > MAX_DOCUMENT_NESTING)
          return [new GraphQLError(tooDeepMessage(nesting), { extensions: { code: "BAD_USER_INPUT" } })];
        // graphql-ws lets a syntax error escape and closes the whole socket with 4500 (every other
        // subscription on it ends too); answered as an error for this subscription instead.
        try {
          parse(payload.query);
        } catch (err) {
          return [
            err instanceof GraphQLError
              ? err
              : new GraphQLError("The document could not be parsed", { extensions: { code: "BAD_USER_INPUT" } }),
          ];
        }
      },
      onConnect: async (ctx) => {
        const principal = await auth.fromCredentials(credentialsFromConnectionParams(ctx.connectionParams));
        if (principal.type === "anonymous") return false; // closes with 4403 Forbidden
        ctx.extra.ctx = { principal, container, requestId: randomUUID() };
        return true;
      },
      context: (ctx) => ctx.extra.ctx as GqlContext,
      // Errors inside a result (e.g. NOT_FOUND thrown while opening the stream) get extensions.code as over HTTP.
      onNext: (_ctx, _id, _payload, _args, result) => {
        if (!result.errors?.length) return;
        return {
          ...result,
          errors: result.errors.map((e) => {
            const f = formatGraphQLError(e.toJSON(), e, exposeInternals);
            logFailure(f, e.originalError ?? e, e.path, "a GraphQL subscription");
            return f;
          }),
        };
      },
      onError: (_ctx, _id, _payload, errors) =>
        errors.map((e) => {
          const f = formatGraphQLError(e.toJSON(), e, exposeInternals);
          logFailure(f, e.originalError ?? e, e.path, "a GraphQL subscription");
          return Object.assign(e, { message: f.message, extensions: f.extensions });
        }),
    },
    wss,
  );

  const apollo = new ApolloServer<GqlContext>({
    schema,
    validationRules: [limits],
    introspection: deps.introspection,
    allowBatchedHttpRequests: false,
    // main.ts owns SIGTERM/SIGINT and stops Apollo through app.stop(). Apollo's own handler would start a
    // second, concurrent stop(), and in 5.5.1 a concurrent stop() never settles (its barrier is resolved only
    // on error), so every shutdown waited for main.ts's 30 s force-exit and ended with code 1.
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    stringifyResult: (value) => `${stringifyExact(value)}\n`,
    formatError: (formatted, error) => {
      const f = formatGraphQLError(formatted, error, exposeInternals);
      logFailure(
        f,
        error instanceof GraphQLError ? (error.originalError ?? error) : error,
        formatted.path,
        "a GraphQL operation",
      );
      return f;
    },
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      // Apollo would run a subscription operation over HTTP as a query (its resolvers expect a stream: INTERNAL).
      {
        async requestDidStart() {
          return {
            async didResolveOperation({ operation }) {
              if (operation?.operation === "subscription")
                throw new GraphQLError(
                  "Subscriptions are served over graphql-ws (WebSocket) on /graphql, not over HTTP",
                  { extensions: { code: "BAD_USER_INPUT", http: { status: 400 } } },
                );
            },
          };
        },
      },
      // The default cache-control plugin wraps every field resolver to collect hints; no type declares any,
      // so it only cost time on every field of every operation (REST included).
      ApolloServerPluginCacheControlDisabled(),
      {
        async serverWillStart() {
          return {
            async drainServer() {
              await wsCleanup.dispose();
            },
          };
        },
      },
    ],
  });
  await apollo.start();
  const prepare = (source: string): DocumentNode => {
    const document = parse(source);
    const errors = validate(schema, document, rules);
    if (errors.length > 0)
      throw new Error(`invalid fixed GraphQL document: ${errors.map((e) => e.message).join("; ")}`);
    return document;
  };
  // The REST shim's documents are constants, parsed and validated once above, so it runs them straight
  // through graphql-js: Apollo's per-request pipeline (query hash, plugin hooks, response assembly) was a
  // tenth of a generate request's CPU. Errors go through the same formatter with Apollo's defaults: a
  // variable coercion failure (execution never started, so no `data`) is BAD_USER_INPUT, a code-less error
  // INTERNAL_SERVER_ERROR (which the formatter turns into INTERNAL).
  const run: GraphQLEdge["run"] = async (document, variables, ctx) => {
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
  const apolloMiddleware = expressMiddleware(apollo, {
    context: async ({ req }) => contextFor(req.headers, (req as unknown as { id?: string }).id ?? randomUUID()),
  });
  const middleware: RequestHandler = (req, res, next) => {
    const query: unknown = (req.body as { query?: unknown } | undefined)?.query ?? req.query?.query;
    const nesting = typeof query === "string" ? documentNesting(query) : 0;
    if (nesting > MAX_DOCUMENT_NESTING) {
      res
        .status(400)
        .json({ errors: [{ message: tooDeepMessage(nesting), extensions: { code: "BAD_USER_INPUT", details: [] } }] });
      return;
    }
    return apolloMiddleware(req, res, next);
  };
  return {
    schema,
    apollo,
    middleware,
    contextFor,
    prepare,
    run,
    async dispose() {
      await apollo.stop();
      wss.close();
    },
  };
}
