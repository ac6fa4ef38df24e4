import express, { type Router } from "express";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface DashboardOptions {
  /** Whether the /sim/* controls exist (demo mode and tests): the dashboard shows its pay/approve/… buttons only then. */
  simulators: boolean;
  baseUrl: string;
  /** The app's areas, in module order (module.ts AreaDefinition): the pages name kinds and targets from these. */
  areas: DashboardArea[];
  /** Demo mode's buttons on a transaction, by area (the demo module's; none without simulators). */
  controls: Record<
    string,
    { label: string; path: string; fields: Record<string, string>; fixed?: Record<string, string> }[]
  >;
}

/** What the dashboard's pages know of an area. */
export interface DashboardArea {
  kind: string;
  label: string;
  authType: string;
  /** What its keys are bound to: the admin input field, the admin query listing them, what one is called. */
  target: { field: string; query: string; what: string } | null;
}

const here = dirname(fileURLToPath(import.meta.url));

/** src/dashboard/public, from the sources (tests) or from dist/src/dashboard (the built service and the image). */
function publicDir(): string {
  const candidates = [join(here, "public"), join(here, "../../../src/dashboard/public")];
  const found = candidates.find((d) => existsSync(join(d, "index.html")));
  if (found === undefined) throw new Error(`dashboard assets not found (looked in ${candidates.join(", ")})`);
  return found;
}

/** The graphql-ws package's browser client (ESM, no dependencies), served as a vendored module: no CDN, no bundler. */
function graphqlWsDir(): string {
  return dirname(createRequire(import.meta.url).resolve("graphql-ws"));
}

/** Chart.js's dist folder (its one-file UMD build: no eval, nothing loaded from elsewhere). */
function chartJsDir(): string {
  return dirname(createRequire(import.meta.url).resolve("chart.js"));
}

// The admin token lives in sessionStorage, so script injection is the threat that matters: only our own scripts run.
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** The web dashboard at /dashboard: static assets, the vendored graphql-ws client and Chart.js, the runtime config. */
export function dashboardRouter(opts: DashboardOptions): Router {
  const r = express.Router();
  r.use((_req, res, next) => {
    res.setHeader("content-security-policy", CSP);
    res.setHeader("referrer-policy", "no-referrer");
    res.setHeader("x-content-type-options", "nosniff");
    next();
  });
  r.get("/config.json", (_req, res) => {
    res.setHeader("cache-control", "no-store");
    res.json({
      simulators: opts.simulators,
      graphqlPath: "/graphql",
      inboxUrl: opts.simulators ? `${opts.baseUrl}/sim/inbox` : null,
      linkSimulatorUrl: opts.simulators ? `${opts.baseUrl}/sim/link/p/` : null,
      areas: opts.areas,
      controls: opts.controls,
    });
  });
  const vendor = express.static(graphqlWsDir(), { index: false, fallthrough: false, maxAge: "1h" });
  r.use("/vendor/graphql-ws", (req, res, next) => {
    // Only the client and its one shared chunk.
    if (!/^\/(client|common-[\w-]+)\.js$/.test(req.path)) return next();
    vendor(req, res, next);
  });
  const charts = express.static(chartJsDir(), { index: false, fallthrough: false, maxAge: "1h" });
  r.use("/vendor/chart.js", (req, res, next) => {
    // Only the one-file build the overview page loads.
    if (req.path !== "/chart.umd.min.js") return next();
    charts(req, res, next);
  });
  r.use(express.static(publicDir(), { index: "index.html", maxAge: 0 }));
  return r;
}
