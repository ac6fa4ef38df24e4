import type { IncomingMessage, Server } from "node:http";
import { randomUUID } from "node:crypto";
import { WebSocketServer } from "ws";
import { useServer, type Extra } from "graphql-ws/use/ws";
import type { ServerOptions } from "graphql-ws";
import { GraphQLError } from "graphql";
import type { Logger } from "../logger.js";
import type { Authenticator } from "../auth/keys.js";
import type { Principal } from "../auth/principal.js";
import type { ResolverContainer } from "./container.js";
import { credentialsFromConnectionParams } from "../auth/credentials.js";
import type { GqlContext } from "./context.js";
import { formatGraphQLError } from "./errors.js";
import type { Invalidations } from "../cache/invalidation.js";
import { bucketOf, rateLimitedMessage, type RateLimiter } from "../auth/rate-limit.js";
import { throttledMessage, type BearerThrottle } from "../auth/bearer-throttle.js";
import { CLOSE, SocketRegistry, type SocketLimits, type TrackedSocket } from "./sockets.js";
import { SharedExecution } from "./shared-execution.js";
import { SharedFrames } from "./frames.js";
import { InitWait } from "./init-wait.js";
import type { FailureLog } from "./edge.js";
import type { GraphQLAdmission } from "./admission.js";

// The websocket edge of /graphql: graphql-ws on the HTTP server's upgrade, with this service's admission (caps per
// address and credential, the shared credential throttle, the rate limiter), the per-operation checks HTTP makes
// too (the admission of admission.ts: nesting, validation, cost, the checkout view), re-authorisation of open sockets, and the idle sweep.

type Credentials = ReturnType<typeof credentialsFromConnectionParams>;
/** What a /graphql websocket carries through graphql-ws (`ctx.extra`). */
export type SocketExtra = {
  ctx?: GqlContext;
  creds?: Credentials;
  ip?: string;
  lastActive?: number;
};
type WsOptions = ServerOptions<Record<string, unknown>, Extra & Partial<SocketExtra>>;

export interface WebSocketEdgeDeps {
  /** The rules every document and operation passes, the same as over HTTP (admission.ts). */
  admission: GraphQLAdmission;
  httpServer: Server;
  auth: Pick<Authenticator, "fromCredentials">;
  logger: Logger;
  container: ResolverContainer;
  exposeInternals: boolean;
  invalidations?: Invalidations;
  limiter: RateLimiter | null;
  throttle: Pick<BearerThrottle, "refusal" | "fail"> | null;
  /** Who an upgrade request comes from (src/auth/client-address.ts): the budgets per address are charged to it. */
  addressOf: (req: IncomingMessage) => string;
  limits: SocketLimits & { keepaliveMs: number; idleTimeoutMs: number };
  logFailure: FailureLog;
  now: () => number;
}

export interface WebSocketEdge {
  /** graphql-ws's own cleanup (Apollo's drain calls it). */
  drain(): Promise<void>;
  /** Stops the idle sweep (first step of the edge's dispose). */
  stopSweep(): void;
  /** Closes the websocket server (last step of the edge's dispose). */
  close(): void;
}

/**
 * A socket's `connection_init` credentials under the per-address throttle it shares with HTTP: a throttled
 * address is refused before its token is checked (a valid client token excepted, as over HTTP), and a wrong
 * admin or client token is charged to it. API keys are not throttled here, as over HTTP (they have the
 * per-caller rate limit).
 */
async function authenticateSocket(
  creds: Credentials,
  ip: string,
  auth: WebSocketEdgeDeps["auth"],
  throttle: WebSocketEdgeDeps["throttle"],
): Promise<Principal | { throttledFor: number }> {
  // The token authentication judges: the bearer token if there is one, else the clientToken.
  const token = creds.bearer || creds.clientToken;
  const wait = token && throttle ? await throttle.refusal(ip, token) : 0;
  if (wait > 0) return { throttledFor: wait };
  const principal = await auth.fromCredentials(creds);
  if (principal.type === "anonymous" && token) throttle?.fail(ip);
  return principal;
}

const operationError = (message: string, code: string) => [new GraphQLError(message, { extensions: { code } })];

/** graphql-ws on the HTTP server at /graphql, with the service's admission and checks. */
export function createWebSocketEdge(deps: WebSocketEdgeDeps): WebSocketEdge {
  const sockets = new SocketRegistry(deps.limits, deps.now);
  const shared = new SharedExecution();
  // A live event's shared result is serialised once, not once per socket (src/graphql/frames.ts).
  const frames = new SharedFrames((v) => shared.isShared(v));
  // Frames are capped like HTTP bodies (64 KiB); ws would take 100 MiB by default. Over the cap: close 1009.
  const wss = new WebSocketServer({ server: deps.httpServer, path: "/graphql", maxPayload: 64 * 1024 });
  const initWait = new InitWait();
  // meta goes out exactly as it was read (src/exact-json.ts): graphql-ws stringifies with exactReplacer (through
  // frames.replacer), which leaves markers that each socket's send replaces by the exact text.
  wss.on("connection", (socket, request) => {
    const send = socket.send.bind(socket) as (data: unknown, cb?: (err?: Error) => void) => void;
    (socket as unknown as { send: typeof send }).send = (data, cb) =>
      send(typeof data === "string" ? frames.splice(data) : data, cb);
    // Sockets per address are counted from the upgrade on: a flood of sockets that never authenticate counts.
    const ip = deps.addressOf(request);
    if (!sockets.openAddress(ip)) {
      socket.close(CLOSE.TOO_MANY, `Too many sockets from this address (the limit is ${deps.limits.maxSocketsPerIp})`);
      return;
    }
    socket.once("close", () => {
      sockets.closeAddress(ip);
      sockets.remove(socket);
    });
    initWait.watch(socket);
  });
  const reauthorise = reauthoriser(deps, sockets);
  const sweep = watchCredentials(deps, sockets, reauthorise);
  const formatErrors = subscriptionErrors(deps);
  const cleanup = useServer<Record<string, unknown>, SocketExtra>(
    {
      schema: deps.admission.schema,
      // Ours (init-wait.ts): graphql-ws's timer closed sockets whose connection_init had arrived but not been read.
      connectionInitWaitTimeout: 0,
      subscribe: (args) => shared.subscribe(args),
      jsonMessageReplacer: frames.replacer,
      onSubscribe: subscriptionGate(deps, sockets, reauthorise),
      onComplete: (ctx) => {
        ctx.extra.lastActive = deps.now();
      },
      onConnect: socketAdmission(deps, sockets, initWait),
      ...formatErrors,
    },
    wss,
    deps.limits.keepaliveMs,
  );
  return {
    drain: async () => {
      await cleanup.dispose();
    },
    stopSweep: () => clearInterval(sweep),
    close: () => wss.close(),
  };
}

type Reauthorise = (socket: TrackedSocket, extra: SocketExtra) => Promise<Principal | null>;

/**
 * Credentials are checked again for every operation on a socket (through the key cache), and for every
 * open socket when a key is invalidated: a revoked key's (or its client tokens') sockets close with 4403.
 */
function reauthoriser(deps: WebSocketEdgeDeps, sockets: SocketRegistry): Reauthorise {
  return async (socket, extra) => {
    const principal = await deps.auth.fromCredentials(extra.creds ?? {});
    if (principal.type === "anonymous") {
      socket.close(CLOSE.FORBIDDEN, "Forbidden: the credential is no longer valid");
      return null;
    }
    sockets.update(socket, principal);
    if (extra.ctx) extra.ctx = { ...extra.ctx, principal };
    return principal;
  };
}

/**
 * Open sockets re-checked when a key is invalidated (or every cache cleared), and by a periodic sweep that also
 * closes idle sockets (no operation, nothing received for WS_IDLE_TIMEOUT_MS), in case an invalidation was
 * missed while the listener reconnected. Returns the sweep's timer.
 */
function watchCredentials(deps: WebSocketEdgeDeps, sockets: SocketRegistry, reauthorise: Reauthorise) {
  // In chunks that yield between them: 10,000 sockets re-checked in one turn held the event loop ~100 ms.
  const recheck = async (keyId: string | null) => {
    const all = sockets.socketsOfKey(keyId);
    for (let i = 0; i < all.length; i += 500) {
      if (i > 0) await new Promise((r) => setImmediate(r));
      await Promise.all(
        all.slice(i, i + 500).map(async (socket) => {
          const extra = sockets.extraOf(socket) as SocketExtra | undefined;
          if (extra)
            await reauthorise(socket, extra).catch((err: unknown) =>
              deps.logger.warn({ err }, "websocket re-check failed"),
            );
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
  let rechecking = false;
  const idleTimeoutMs = deps.limits.idleTimeoutMs;
  const sweepEvery = Math.max(250, Math.min(10_000, Math.floor(idleTimeoutMs / 2)));
  const sweep = setInterval(() => {
    for (const socket of sockets.idle(idleTimeoutMs)) socket.close(CLOSE.LIFETIME, "Idle: no operation on this socket");
    if (!rechecking) {
      rechecking = true;
      void recheck(null).finally(() => (rechecking = false));
    }
  }, sweepEvery);
  sweep.unref();
  return sweep;
}

/** connection_init: throttle, credentials, then the caps per credential; the socket's context is set here. */
function socketAdmission(
  deps: WebSocketEdgeDeps,
  sockets: SocketRegistry,
  initWait: InitWait,
): NonNullable<WsOptions["onConnect"]> {
  return async (ctx) => {
    initWait.received(ctx.extra.socket);
    const creds = credentialsFromConnectionParams(ctx.connectionParams);
    const socket = ctx.extra.socket;
    const ip = deps.addressOf(ctx.extra.request);
    const principal = await authenticateSocket(creds, ip, deps.auth, deps.throttle);
    if ("throttledFor" in principal) {
      // graphql-ws clients treat 4429 as final: no reconnect loop against the throttle.
      socket.close(CLOSE.TOO_MANY, throttledMessage(principal.throttledFor));
      return false;
    }
    if (principal.type === "anonymous") return false; // closes with 4403 Forbidden
    Object.assign(ctx.extra, { creds, ip, lastActive: deps.now() });
    ctx.extra.ctx = { principal, container: deps.container, requestId: randomUUID() };
    const refusal = sockets.add(socket, principal, ctx.extra, () => Object.keys(ctx.subscriptions).length);
    if (refusal !== null) {
      socket.close(CLOSE.TOO_MANY, refusal);
      return false;
    }
    return true;
  };
}

/**
 * A subscribe message: the document's text (nesting, parse), credentials again, rate limit and the socket's
 * operation caps, then validation (once per document) and the operation's verdict: the admission of HTTP
 * (admission.ts); an error for this subscription, never the socket.
 */
function subscriptionGate(
  deps: WebSocketEdgeDeps,
  sockets: SocketRegistry,
  reauthorise: Reauthorise,
): NonNullable<WsOptions["onSubscribe"]> {
  const { admission, limiter } = deps;
  return async (ctx, _id, payload) => {
    const socket = ctx.extra.socket;
    ctx.extra.lastActive = deps.now();
    // graphql-ws lets a syntax error escape and closes the whole socket with 4500 (every other subscription on it
    // ends too); answered as an error for this subscription instead. The same text is the same DocumentNode once it
    // validated (the admission keeps it, for both doors), so every checkout page subscribes with one.
    const parsed = admission.parse(payload.query);
    if ("errors" in parsed) return parsed.errors;
    const principal = await reauthorise(socket, ctx.extra);
    if (principal === null || ctx.extra.ctx === undefined)
      return operationError("The credential of this socket is no longer valid", "UNAUTHENTICATED");
    if (limiter !== null) {
      const wait = limiter.take(bucketOf(principal, ctx.extra.ip));
      if (wait > 0) return operationError(rateLimitedMessage(wait), "RATE_LIMITED");
    }
    const refusal = sockets.startOperation(socket, Object.keys(ctx.subscriptions).length);
    if (refusal !== null) return operationError(refusal, "RATE_LIMITED");
    const { document } = parsed;
    const invalid = admission.validate(document, payload.query);
    if (invalid.length > 0) return invalid;
    const { operationName, variables } = payload;
    const refused = admission.operation({ document, operationName, variables, principal, transport: "websocket" });
    if (refused !== null) return [refused];
    return {
      schema: admission.schema,
      document,
      operationName,
      variableValues: variables,
      contextValue: ctx.extra.ctx,
    };
  };
}

/** Errors inside a result (e.g. NOT_FOUND thrown while opening the stream) get extensions.code as over HTTP. */
function subscriptionErrors(deps: WebSocketEdgeDeps): Pick<WsOptions, "onNext" | "onError"> {
  return {
    onNext: (_ctx, _id, _payload, _args, result) => {
      if (!result.errors?.length) return;
      return {
        ...result,
        errors: result.errors.map((e) => {
          const f = formatGraphQLError(e.toJSON(), e, deps.exposeInternals);
          deps.logFailure(f, e.originalError ?? e, e.path, "a GraphQL subscription");
          return f;
        }),
      };
    },
    onError: (_ctx, _id, _payload, errors) =>
      errors.map((e) => {
        const f = formatGraphQLError(e.toJSON(), e, deps.exposeInternals);
        deps.logFailure(f, e.originalError ?? e, e.path, "a GraphQL subscription");
        return Object.assign(e, { message: f.message, extensions: f.extensions });
      }),
  };
}
