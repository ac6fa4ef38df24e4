import type { Server } from "node:http";
import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginDrainHttpServer } from "@apollo/server/plugin/drainHttpServer";
import { ApolloServerPluginCacheControlDisabled } from "@apollo/server/plugin/disabled";
import { ApolloServerPluginLandingPageLocalDefault } from "@apollo/server/plugin/landingPage/default";
import { SANDBOX_DOCUMENT, SANDBOX_HEADERS, SANDBOX_VARIABLES } from "./sandbox.js";
import { withExplorerLink } from "./explorer.js";
import { expressMiddleware } from "@as-integrations/express5";
import { WebSocketServer } from "ws";
import { useServer } from "graphql-ws/use/ws";
import type { RequestHandler } from "express";
import {
  execute,
  getOperationAST,
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
import { stringifyExact } from "../exact-json.js";
import type { Invalidations } from "../cache/invalidation.js";
import { bucketOf, rateLimitedMessage, type RateLimiter } from "../auth/rate-limit.js";
import { throttledMessage, type BearerThrottle } from "../auth/bearer-throttle.js";
import { CLOSE, SocketRegistry, type SocketLimits, type TrackedSocket } from "./sockets.js";
import { checkoutViewError, outsideCheckoutView } from "./checkout-view.js";
import { costError, operationCost } from "./cost.js";
import { SharedExecution } from "./shared-execution.js";
import { SharedFrames } from "./frames.js";
import { InitWait } from "./init-wait.js";

type Credentials = ReturnType<typeof credentialsFromConnectionParams>;
/** What a /graphql websocket carries through graphql-ws (`ctx.extra`). */
type SocketExtra = {
  ctx?: GqlContext;
  creds?: Credentials;
  ip?: string;
  lastActive?: number;
};

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
  /** Key revocations (and cache clears) re-authorise the open websockets. */
  invalidations?: Invalidations;
  /** The one per-principal limiter (null: RATE_LIMIT_PER_MINUTE=0); HTTP charges it in app.ts. */
  limiter?: RateLimiter | null;
  /**
   * The per-address budget of wrong admin and client tokens, shared with HTTP (app.ts): a wrong token in
   * `connection_init` is charged to it, and a throttled address's sockets close with 4429 before any check.
   */
  credentialThrottle?: Pick<BearerThrottle, "blockedFor" | "fail"> | null;
  ws?: SocketLimits & { keepaliveMs: number; idleTimeoutMs: number };
  /** Per-operation cost budget, response-size cap (bytes) and time budget (ms). */
  limits?: { maxCost: number; maxResponseBytes: number; timeBudgetMs: number };
  now?: () => number;
}

/** When an operation answered nothing and every error has one of these codes, the HTTP status says so too. */
const NOTHING_ANSWERED_STATUS: Record<string, number> = { UNAUTHENTICATED: 401, BAD_USER_INPUT: 400, FORBIDDEN: 403 };

export const DEFAULT_OPERATION_LIMITS: NonNullable<GraphQLEdgeDeps["limits"]> = {
  maxCost: 5000,
  maxResponseBytes: 2 * 1024 * 1024,
  timeBudgetMs: 10_000,
};

export const DEFAULT_WS_LIMITS: NonNullable<GraphQLEdgeDeps["ws"]> = {
  maxLifetimeMs: 3600_000,
  maxSocketsPerPrincipal: 200,
  maxSocketsPerIp: 1000,
  maxSubscriptionsPerSocket: 100,
  subscribesPerSecond: 20,
  keepaliveMs: 30_000,
  idleTimeoutMs: 90_000,
};

/**
 * A socket's `connection_init` credentials under the per-address throttle it shares with HTTP: a throttled
 * address is refused before its token is even checked, and a wrong admin or client token is charged to it.
 * API keys are not throttled here, as over HTTP (they have the per-caller rate limit).
 */
async function authenticateSocket(
  creds: Credentials,
  ip: string,
  auth: GraphQLEdgeDeps["auth"],
  throttle: GraphQLEdgeDeps["credentialThrottle"],
): Promise<Principal | { throttledFor: number }> {
  // The token authentication judges: the bearer token if there is one, else the clientToken.
  const token = creds.bearer || creds.clientToken;
  const wait = token && throttle ? throttle.blockedFor(ip) : 0;
  if (wait > 0) return { throttledFor: wait };
  const principal = await auth.fromCredentials(creds);
  if (principal.type === "anonymous" && token) throttle?.fail(ip);
  return principal;
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
  const wsLimits = deps.ws ?? DEFAULT_WS_LIMITS;
  const opLimits = deps.limits ?? DEFAULT_OPERATION_LIMITS;
  /** Responses measured in willSendResponse, so stringifyResult does not serialise them a second time. */
  const serialised = new WeakMap<object, string>();
  const now = deps.now ?? Date.now;
  const limiter = deps.limiter ?? null;
  const throttle = deps.credentialThrottle ?? null;
  const sockets = new SocketRegistry(wsLimits, now);
  const shared = new SharedExecution();
  // A live event's shared result is serialised once, not once per socket (src/graphql/frames.ts).
  const frames = new SharedFrames((v) => shared.isShared(v));
  // Frames are capped like HTTP bodies (64 KiB); ws would take 100 MiB by default. Over the cap: close 1009.
  const wss = new WebSocketServer({ server: httpServer, path: "/graphql", maxPayload: 64 * 1024 });
  const initWait = new InitWait();
  // meta goes out exactly as it was read (src/exact-json.ts): graphql-ws stringifies with exactReplacer (through
  // frames.replacer), which leaves markers that each socket's send replaces by the exact text.
  wss.on("connection", (socket, request) => {
    const send = socket.send.bind(socket) as (data: unknown, cb?: (err?: Error) => void) => void;
    (socket as unknown as { send: typeof send }).send = (data, cb) =>
      send(typeof data === "string" ? frames.splice(data) : data, cb);
    // Sockets per address are counted from the upgrade on: a flood of sockets that never authenticate counts.
    const ip = request.socket.remoteAddress ?? "unknown";
    if (!sockets.openAddress(ip)) {
      socket.close(CLOSE.TOO_MANY, `Too many sockets from this address (the limit is ${wsLimits.maxSocketsPerIp})`);
      return;
    }
    socket.once("close", () => {
      sockets.closeAddress(ip);
      sockets.remove(socket);
    });
    initWait.watch(socket);
  });
  const operationError = (message: string, code: string) => [new GraphQLError(message, { extensions: { code } })];
  /**
   * Credentials are checked again for every operation on a socket (through the key cache), and for every
   * open socket when a key is invalidated: a revoked key's (or its client tokens') sockets close with 4403.
   */
  const reauthorise = async (socket: TrackedSocket, extra: SocketExtra): Promise<Principal | null> => {
    const principal = await auth.fromCredentials(extra.creds ?? {});
    if (principal.type === "anonymous") {
      socket.close(CLOSE.FORBIDDEN, "Forbidden: the credential is no longer valid");
      return null;
    }
    sockets.update(socket, principal);
    if (extra.ctx) extra.ctx = { ...extra.ctx, principal };
    return principal;
  };
  // In chunks that yield between them: 10,000 sockets re-checked in one turn held the event loop ~100 ms.
  const recheck = async (keyId: string | null) => {
    const all = sockets.socketsOfKey(keyId);
    for (let i = 0; i < all.length; i += 500) {
      if (i > 0) await new Promise((r) => setImmediate(r));
      await Promise.all(
        all.slice(i, i + 500).map(async (socket) => {
          const extra = sockets.extraOf(socket) as SocketExtra | undefined;
          if (extra)
            await reauthorise(socket, extra).catch((err: unknown) => logger.warn({ err }, "websocket re-check failed"));
        }),
      );
    }
  };
  deps.invalidations?.register({
    invalidate: (inv) => {
      if (inv.kind === "api_key") void recheck(inv.id);
    },
    clear: () => void recheck(null),
  });
  // Idle sockets (no operation, nothing received for WS_IDLE_TIMEOUT_MS) are closed; every socket is
  // re-authorised now and then too, in case an invalidation was missed while the listener reconnected.
  let rechecking = false;
  const sweepEvery = Math.max(250, Math.min(10_000, Math.floor(wsLimits.idleTimeoutMs / 2)));
  const sweep = setInterval(() => {
    for (const socket of sockets.idle(wsLimits.idleTimeoutMs))
      socket.close(CLOSE.LIFETIME, "Idle: no operation on this socket");
    if (!rechecking) {
      rechecking = true;
      void recheck(null).finally(() => (rechecking = false));
    }
  }, sweepEvery);
  sweep.unref();
  const validDocuments = new WeakSet<DocumentNode>();
  const outsideView = new WeakMap<DocumentNode, ReturnType<typeof outsideCheckoutView>>();
  const wsCleanup = useServer<Record<string, unknown>, SocketExtra>(
    {
      schema,
      // Ours (init-wait.ts): graphql-ws's timer closed sockets whose connection_init had arrived but not been read.
      connectionInitWaitTimeout: 0,
      subscribe: (args) => shared.subscribe(args),
      jsonMessageReplacer: frames.replacer,
      onSubscribe: async (ctx, _id, payload) => {
        const socket = ctx.extra.socket;
        ctx.extra.lastActive = now();
        const nesting = documentNesting(payload.query);
        if (nesting > MAX_DOCUMENT_NESTING) return operationError(tooDeepMessage(nesting), "BAD_USER_INPUT");
        // graphql-ws lets a syntax error escape and closes the whole socket with 4500 (every other
        // subscription on it ends too); answered as an error for this subscription instead.
        let document: DocumentNode;
        try {
          document = shared.parseShared(payload.query);
        } catch (err) {
          return [
            err instanceof GraphQLError
              ? err
              : new GraphQLError("The document could not be parsed", { extensions: { code: "BAD_USER_INPUT" } }),
          ];
        }
        const principal = await reauthorise(socket, ctx.extra);
        if (principal === null || ctx.extra.ctx === undefined)
          return operationError("The credential of this socket is no longer valid", "UNAUTHENTICATED");
        if (limiter !== null) {
          const wait = limiter.take(bucketOf(principal, ctx.extra.ip));
          if (wait > 0) return operationError(rateLimitedMessage(wait), "RATE_LIMITED");
        }
        const refusal = sockets.startOperation(socket, Object.keys(ctx.subscriptions).length);
        if (refusal !== null) return operationError(refusal, "RATE_LIMITED");
        // A document is the same DocumentNode for the same text (parseShared), so one that validated once is
        // valid for good: every checkout page subscribes with the same document.
        if (!validDocuments.has(document)) {
          const errors = validate(schema, document, rules);
          if (errors.length > 0)
            return deps.introspection
              ? errors
              : errors.map((e) => Object.assign(e, { message: e.message.replace(/ ?Did you mean .*\?$/, "") }));
          validDocuments.add(document);
        }
        if (getOperationAST(document, payload.operationName) === null)
          return operationError("Unable to identify operation", "BAD_USER_INPUT");
        const tooCostly = costError(
          operationCost(schema, document, payload.variables ?? undefined, payload.operationName),
          opLimits.maxCost,
        );
        if (tooCostly !== null) return [tooCostly];
        if (principal.type === "client") {
          let outside = outsideView.get(document);
          if (outside === undefined) outsideView.set(document, (outside = outsideCheckoutView(schema, document)));
          if (outside.length > 0) return [checkoutViewError(outside)];
        }
        return {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: ctx.extra.ctx,
        };
      },
      onComplete: (ctx) => {
        ctx.extra.lastActive = now();
      },
      onConnect: async (ctx) => {
        initWait.received(ctx.extra.socket);
        const creds = credentialsFromConnectionParams(ctx.connectionParams);
        const socket = ctx.extra.socket;
        const ip = ctx.extra.request.socket.remoteAddress ?? "unknown";
        const principal = await authenticateSocket(creds, ip, auth, throttle);
        if ("throttledFor" in principal) {
          // graphql-ws clients treat 4429 as final: no reconnect loop against the throttle.
          socket.close(CLOSE.TOO_MANY, throttledMessage(principal.throttledFor));
          return false;
        }
        if (principal.type === "anonymous") return false; // closes with 4403 Forbidden
        Object.assign(ctx.extra, { creds, ip, lastActive: now() });
        ctx.extra.ctx = { principal, container, requestId: randomUUID() };
        const refusal = sockets.add(socket, principal, ctx.extra, () => Object.keys(ctx.subscriptions).length);
        if (refusal !== null) {
          socket.close(CLOSE.TOO_MANY, refusal);
          return false;
        }
        return true;
      },
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
    wsLimits.keepaliveMs,
  );

  const apollo = new ApolloServer<GqlContext>({
    schema,
    validationRules: [limits],
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
            async didResolveOperation({ operation, contextValue, document, request }) {
              if (operation?.operation === "subscription")
                throw new GraphQLError(
                  "Subscriptions are served over graphql-ws (WebSocket) on /graphql, not over HTTP",
                  { extensions: { code: "BAD_USER_INPUT", http: { status: 400 } } },
                );
              if (contextValue.principal.type === "client") {
                const outside = outsideCheckoutView(schema, document);
                if (outside.length > 0) throw checkoutViewError(outside);
              }
              const tooCostly = costError(
                operationCost(schema, document, request.variables, request.operationName),
                opLimits.maxCost,
              );
              if (tooCostly !== null) throw tooCostly;
            },
            // The time budget: once it is spent, every field still to resolve fails at once (what was
            // resolved is kept), so an operation cannot hold the process for longer than GRAPHQL_TIME_BUDGET_MS.
            async executionDidStart() {
              const deadline = Date.now() + opLimits.timeBudgetMs;
              return {
                willResolveField() {
                  if (Date.now() <= deadline) return;
                  throw new GraphQLError(
                    `The operation ran over its time budget of ${opLimits.timeBudgetMs} ms (GRAPHQL_TIME_BUDGET_MS)`,
                    { extensions: { code: "BAD_USER_INPUT" } },
                  );
                },
              };
            },
            // Apollo's convention: a request refused for its credentials answers 401 (and one refused for its
            // input 400), not 200 with an error (docs/decisions.md). Only when nothing was answered: partial data
            // keeps 200.
            async willSendResponse({ response }) {
              if (response.body.kind !== "single") return;
              // The response-size cap: measured once here (stringifyResult reuses the text).
              const r = response.body.singleResult;
              // In the order Apollo writes it (errors, data, extensions).
              const text = stringifyExact({ errors: r.errors, data: r.data, extensions: r.extensions });
              if (Buffer.byteLength(text) > opLimits.maxResponseBytes) {
                response.body.singleResult = {
                  errors: [
                    {
                      message:
                        `The response is larger than ${opLimits.maxResponseBytes} bytes (GRAPHQL_MAX_RESPONSE_BYTES); ` +
                        "ask for fewer rows (first) or fewer fields",
                      extensions: { code: "BAD_USER_INPUT", details: [] },
                    },
                  ],
                };
                response.http.status = 400;
                return;
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
                response.http.status = NOTHING_ANSWERED_STATUS[code];
            },
          };
        },
      },
      // The default cache-control plugin wraps every field resolver to collect hints; no type declares any,
      // so it only cost time on every field of every operation (REST included).
      ApolloServerPluginCacheControlDisabled(),
      // Sandbox opens with an example of every kind of operation (graphql/sandbox.ts); production keeps Apollo's default.
      ...(deps.introspection
        ? [
            withExplorerLink(
              ApolloServerPluginLandingPageLocalDefault({
                document: SANDBOX_DOCUMENT,
                variables: SANDBOX_VARIABLES,
                headers: SANDBOX_HEADERS,
                includeCookies: false,
                embed: true,
              }),
            ),
          ]
        : []),
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
      clearInterval(sweep);
      await apollo.stop();
      wss.close();
    },
  };
}
