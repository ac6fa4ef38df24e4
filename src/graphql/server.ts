import type { Server } from "node:http";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { ApolloServerPluginCacheControlDisabled } from "@apollo/server/plugin/disabled";
import { expressMiddleware } from "@as-integrations/express5";
import { WebSocketServer } from "ws";
import { useServer } from "graphql-ws/use/ws";
import type { RequestHandler } from "express";
import { execute, parse, specifiedRules, validate, type DocumentNode, type GraphQLFormattedError, type GraphQLSchema } from "graphql";
import { randomUUID } from "node:crypto";
import type { Services } from "../services.js";
import { credentialsFromConnectionParams, credentialsFromHeaders } from "../auth/credentials.js";
import type { GqlContext } from "./context.js";
import { formatGraphQLError } from "./errors.js";
import { limitsRule } from "./limits.js";

export interface GraphQLEdge {
  apollo: ApolloServer<GqlContext>;
  middleware: RequestHandler;
  contextFor(headers: Record<string, string | string[] | undefined>, requestId: string): Promise<GqlContext>;
  /** Parses and validates a fixed document once (the REST shim's eight); throws when it is not valid. */
  prepare(source: string): DocumentNode;
  /** Executes a prepared document against the schema, errors formatted exactly as Apollo formats them. */
  run(document: DocumentNode, variables: Record<string, unknown>, ctx: GqlContext): Promise<{ data?: Record<string, unknown> | null; errors?: GraphQLFormattedError[] }>;
  dispose(): Promise<void>;
}

/** Apollo Server 5 on express at /graphql, graphql-ws on the same server and path. */
export async function createGraphQLEdge(schema: GraphQLSchema, httpServer: Server, services: Services): Promise<GraphQLEdge> {
  const exposeInternals = services.config.nodeEnv === "development" && services.config.logLevel === "debug";
  const contextFor = async (headers: Record<string, string | string[] | undefined>, requestId: string): Promise<GqlContext> => {
    const idem = headers["idempotency-key"];
    return {
      principal: await services.auth.fromCredentials(credentialsFromHeaders(headers)),
      services,
      requestId,
      idempotencyKey: Array.isArray(idem) ? idem[0] : idem,
    };
  };

  const limits = limitsRule(12, 500);
  const rules = [...specifiedRules, limits];
  const wss = new WebSocketServer({ server: httpServer, path: "/graphql" });
  const wsCleanup = useServer<Record<string, unknown>, { ctx?: GqlContext }>(
    {
      schema,
      validate: (sch, doc) => validate(sch, doc, rules),
      onConnect: async (ctx) => {
        const principal = await services.auth.fromCredentials(credentialsFromConnectionParams(ctx.connectionParams));
        if (principal.type === "anonymous") return false; // closes with 4403 Forbidden
        ctx.extra.ctx = { principal, services, requestId: randomUUID() };
        return true;
      },
      context: (ctx) => ctx.extra.ctx as GqlContext,
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => {
        const f = formatGraphQLError(e.toJSON(), e, exposeInternals);
        return Object.assign(e, { message: f.message, extensions: f.extensions });
      }),
    },
    wss,
  );

  const apollo = new ApolloServer<GqlContext>({
    schema,
    validationRules: [limits],
    introspection: services.config.nodeEnv !== "production",
    allowBatchedHttpRequests: false,
    // main.ts owns SIGTERM/SIGINT and stops the whole app (this server included). Apollo's own handlers
    // (on by default outside NODE_ENV=test) would call stop() a second time concurrently, and that second
    // call never returns: every shutdown then hung until main.ts's 30 s force-exit, with exit code 1.
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: false,
    formatError: (formatted, error) => formatGraphQLError(formatted, error, exposeInternals),
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      // The default cache-control plugin wraps every field resolver to collect hints; no type declares any,
      // so it only cost time on every field of every operation (REST included).
      ApolloServerPluginCacheControlDisabled(),
      { async serverWillStart() { return { async drainServer() { await wsCleanup.dispose(); } }; } },
    ],
  });
  await apollo.start();
  const prepare = (source: string): DocumentNode => {
    const document = parse(source);
    const errors = validate(schema, document, rules);
    if (errors.length > 0) throw new Error(`invalid fixed GraphQL document: ${errors.map((e) => e.message).join("; ")}`);
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
    const errors = result.errors.map((e) => formatGraphQLError({ ...e.toJSON(), extensions: { ...e.extensions, code: e.extensions.code ?? fallback } }, e, exposeInternals));
    return { data: result.data, errors };
  };
  const middleware = expressMiddleware(apollo, {
    context: async ({ req }) => contextFor(req.headers, (req as unknown as { id?: string }).id ?? randomUUID()),
  });
  return {
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
