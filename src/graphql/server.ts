import type { IncomingMessage, Server } from "node:http";
import type { GraphQLSchema } from "graphql";
import type { Logger } from "../logger.js";
import type { Authenticator } from "../auth/keys.js";
import type { ResolverContainer } from "./container.js";
import { requestPrincipals } from "../auth/request-principal.js";
import type { Principal } from "../auth/principal.js";
import type { GqlContext } from "./context.js";
import { GraphQLAdmission } from "./admission.js";
import { failureLog, type GraphQLEdge } from "./edge.js";
import type { Invalidations } from "../cache/invalidation.js";
import type { RateLimiter } from "../auth/rate-limit.js";
import type { BearerThrottle } from "../auth/bearer-throttle.js";
import type { SocketLimits } from "./sockets.js";
import { createApollo, directRunner, graphqlMiddleware } from "./http-edge.js";
import { sandboxExample, type SandboxExample } from "./sandbox.js";
import { createWebSocketEdge } from "./ws-edge.js";

export type { GraphQLEdge };

/** Apollo Server 5 on express at /graphql, graphql-ws on the same server and path. */
export interface GraphQLEdgeDeps {
  auth: Pick<Authenticator, "fromCredentials">;
  /** A request's principal from its headers, resolved once per request (auth/request-principal.ts); from `auth` if not given. */
  principalOf?: (headers: Record<string, string | string[] | undefined>) => Promise<Principal>;
  logger: Logger;
  container: ResolverContainer;
  /** Messages of internal errors reach the client (development with debug logs only). */
  exposeInternals: boolean;
  introspection: boolean;
  /** What Sandbox on /graphql opens with where introspection is on (graphql/sandbox.ts, from the module list's areas). */
  sandbox?: SandboxExample;
  /** Key revocations (and cache clears) re-authorise the open websockets. */
  invalidations?: Invalidations;
  /** The one per-principal limiter (null: RATE_LIMIT_PER_MINUTE=0); HTTP charges it in app.ts. */
  limiter?: RateLimiter | null;
  /**
   * The per-address budget of wrong admin and client tokens, shared with HTTP (app.ts): a wrong token in
   * `connection_init` is charged to it, and a throttled address's sockets close with 4429 before any check
   * (a valid client token excepted).
   */
  credentialThrottle?: Pick<BearerThrottle, "refusal" | "fail"> | null;
  /** Who a websocket's upgrade request comes from (src/auth/client-address.ts); the TCP peer when not given. */
  addressOf?: (req: IncomingMessage) => string;
  ws?: SocketLimits & { keepaliveMs: number; idleTimeoutMs: number };
  /** Per-operation cost budget, response-size cap (bytes) and time budget (ms). */
  limits?: { maxCost: number; maxResponseBytes: number; timeBudgetMs: number };
  now?: () => number;
}

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
 * The GraphQL edge's lifecycle: the websocket edge (ws-edge.ts) and the HTTP edge (http-edge.ts) on one server and
 * path, started together; dispose stops the sweep, drains Apollo (which ends graphql-ws) and closes the socket server.
 */
export async function createGraphQLEdge(
  schema: GraphQLSchema,
  httpServer: Server,
  deps: GraphQLEdgeDeps,
): Promise<GraphQLEdge> {
  const { auth, logger, container, exposeInternals } = deps;
  /** The client sees a generic message; the cause is logged so a 500 (or a 503: database unreachable) is never silent. */
  const logFailure = failureLog(logger);
  const principalOf = deps.principalOf ?? requestPrincipals(auth);
  const contextFor = async (
    headers: Record<string, string | string[] | undefined>,
    requestId: string,
  ): Promise<GqlContext> => {
    const idem = headers["idempotency-key"];
    return {
      principal: await principalOf(headers),
      container,
      requestId,
      idempotencyKey: Array.isArray(idem) ? idem[0] : idem,
    };
  };
  const opLimits = deps.limits ?? DEFAULT_OPERATION_LIMITS;
  // One admission for both doors and the REST shim's fixed documents (admission.ts).
  const admission = new GraphQLAdmission(schema, { introspection: deps.introspection, maxCost: opLimits.maxCost });
  const sockets = createWebSocketEdge({
    admission,
    httpServer,
    auth,
    logger,
    container,
    exposeInternals,
    invalidations: deps.invalidations,
    limiter: deps.limiter ?? null,
    throttle: deps.credentialThrottle ?? null,
    addressOf: deps.addressOf ?? ((req) => req.socket.remoteAddress ?? "unknown"),
    limits: deps.ws ?? DEFAULT_WS_LIMITS,
    logFailure,
    now: deps.now ?? Date.now,
  });
  const apollo = createApollo({
    admission,
    httpServer,
    introspection: deps.introspection,
    sandbox: deps.sandbox ?? sandboxExample([]),
    exposeInternals,
    limits: opLimits,
    logFailure,
    drainSockets: () => sockets.drain(),
  });
  await apollo.start();
  return {
    schema,
    apollo,
    middleware: graphqlMiddleware(apollo, { admission, limits: opLimits, exposeInternals, logFailure }, contextFor),
    contextFor,
    prepare: (source) => admission.prepare(source),
    run: directRunner(schema, exposeInternals, logFailure),
    async dispose() {
      sockets.stopSweep();
      await apollo.stop();
      sockets.close();
    },
  };
}
