import { join } from "node:path";
import type express from "express";
import type { GraphQLSchema } from "graphql";
import type { Config } from "../config.js";
import type { Clock } from "../clock.js";
import type { Logger } from "../logger.js";
import type { Authenticator } from "../auth/keys.js";
import type { KeyKinds } from "../auth/key-kinds.js";
import { requestPrincipals } from "../auth/request-principal.js";
import type { Invalidations } from "../cache/invalidation.js";
import type { ResolverContainer } from "../graphql/container.js";
import { createGraphQLEdge, type GraphQLEdge } from "../graphql/server.js";
import { graphqlBodyErrors } from "../graphql/http-errors.js";
import { explorerRouter } from "../graphql/explorer.js";
import { sandboxExample, type ExplorerArea } from "../graphql/sandbox.js";
import { jsonParser, restRouter } from "../rest/shim.js";
import { RateLimiter, rateLimitMiddleware } from "../rest/rate-limit.js";
import type { RestRoute } from "../rest/route-table.js";
import { docsRouter } from "../rest/docs.js";
import { freshExamples } from "../rest/fresh-examples.js";
import { demoDocs, type DocsArea } from "../rest/demo-examples.js";
import { EXPORT_PATH, exportRoute } from "../transactions/export-route.js";
import type { TransactionQuery } from "../transactions/transaction-query.js";
import { dashboardRouter, type DashboardOptions } from "../dashboard/index.js";
import type { Http } from "./listeners.js";
import { mountFrontDoor } from "./front-door.js";

// What the API side of the HTTP edge serves and in which order, on which listener: the rate limiter on the
// prefixes the modules declare, the GraphQL edge (HTTP and websocket), the REST paths, the admin token kept off
// the public listener when there is an operator one, the docs, the explorer, /graphql with its body limit, the
// reconciliation export and the dashboard (operators only). app.ts hands it what the module list declares.

/** The body limit of /graphql (the REST paths have theirs per route, rest/shim.ts; websocket frames the same). */
const GRAPHQL_BODY_LIMIT = "64kb";

export interface ApiDeps {
  config: Config;
  auth: Authenticator;
  logger: Logger;
  clock: Clock;
  invalidations: Invalidations;
  kinds: KeyKinds;
  schema: GraphQLSchema;
  container: ResolverContainer;
  /** The modules' REST paths and the prefixes they charge to the caller's rate limit. */
  routes: RestRoute[];
  rateLimited: string[];
  /** The OpenAPI document of this schema (rest/openapi.ts). */
  openApi(schema: GraphQLSchema): Record<string, unknown>;
  areas: readonly (DocsArea & ExplorerArea)[];
  /** The reconciliation export reads through it (decision 0155). */
  query: TransactionQuery;
  dashboard: Omit<DashboardOptions, "baseUrl" | "simulators">;
}

/** The API, where this role answers API requests; returns the GraphQL edge (disposed when the app stops). */
export async function mountApi(http: Http, deps: ApiDeps): Promise<GraphQLEdge> {
  const { app, adminApp, adminServer } = http;
  const { config, auth, schema } = deps;
  // One limiter, keyed on the resolved principal, for HTTP here and for websocket operations in the edge.
  const limiter = config.rateLimit.perMinute > 0 ? new RateLimiter(config.rateLimit.perMinute) : null;
  // Resolved once per request: the limiter's bucket, the REST shim's 401 and the GraphQL context share it.
  const principalOf = requestPrincipals(auth);
  if (limiter !== null)
    app.use(["/graphql", ...deps.rateLimited], rateLimitMiddleware(limiter, principalOf, http.addressOf));
  const sandbox = sandboxExample(deps.areas);
  const edge = await createGraphQLEdge(schema, http.server, {
    auth,
    principalOf,
    logger: deps.logger,
    container: deps.container,
    exposeInternals: config.nodeEnv === "development" && config.logLevel === "debug",
    introspection: config.nodeEnv !== "production",
    sandbox,
    invalidations: deps.invalidations,
    limiter,
    credentialThrottle: http.credentialThrottle,
    addressOf: http.addressOf,
    ws: config.ws,
    limits: config.graphql,
    now: () => deps.clock.now().getTime(),
  });
  app.use(restRouter(deps.routes, edge, deps.kinds));
  const graphql = [...jsonParser(GRAPHQL_BODY_LIMIT), edge.middleware, graphqlBodyErrors];
  if (adminServer !== null) {
    app.use("/graphql", adminOnOperatorListener(auth));
    adminApp.use("/graphql", ...graphql);
  }
  const demoFile = join(config.dataDir, "demo.json");
  app.use(
    docsRouter(
      () => deps.openApi(schema),
      config.demo ? demoDocs(http.baseUrl, demoFile, deps.areas) : null,
      freshExamples(deps.routes, deps.areas),
    ),
  );
  // The offline explorer, where introspection is on (GraphiQL reads the schema by it).
  if (config.nodeEnv !== "production")
    app.use(explorerRouter({ demoFile: config.demo ? demoFile : null, schema, sandbox }));
  app.use("/graphql", ...graphql);
  mountFrontDoor(app, {
    explorers: config.nodeEnv !== "production",
    dashboardHere: adminServer === null,
    simulators: config.simulators,
  });
  // The reconciliation export (decision 0155): operators only; its area filter knows this module list's areas.
  adminApp.get(
    EXPORT_PATH,
    exportRoute({ query: deps.query, isAdmin: (req) => auth.isAdminRequest(req.headers), areas: deps.kinds.kinds() }),
  );
  adminApp.use(
    "/dashboard",
    dashboardRouter({ simulators: config.simulators, baseUrl: http.baseUrl, ...deps.dashboard }),
  );
  return edge;
}

/** With an operator listener (ADMIN_PORT), the admin token is accepted there only: the public /graphql refuses it. */
function adminOnOperatorListener(auth: Pick<Authenticator, "isAdminRequest">): express.RequestHandler {
  return (req, res, next) => {
    if (!auth.isAdminRequest(req.headers)) return next();
    res.status(403).json({
      errors: [
        {
          message: "The admin API is served on the operator listener (ADMIN_PORT)",
          extensions: { code: "FORBIDDEN" },
        },
      ],
    });
  };
}
