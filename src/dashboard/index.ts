import express, { type Router } from "express";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { inFolder, serveAssets } from "../cache/static-assets.js";
import { moneyModuleAt } from "../money/browser-file.js";
import type { AreaData } from "../module.js";

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
  /** The fields of its transactions the pages query and show (AreaField.dashboard), in its order. */
  fields: DashboardField[];
  /** Whether the transactions search matches its reference fields. */
  searched: boolean;
}

/** One field of an area's transactions as the pages show it (module.ts AreaField.dashboard). */
export interface DashboardField {
  /** The `Transaction` field, with its sub-selection for an object (`{ code message }`). */
  name: string;
  select?: string;
  label: string;
  show: "text" | "code" | "link";
  /** The transactions table's reference of the area's rows; `short`: labelled and cut to 10 characters. */
  reference?: "whole" | "short";
  /** Whether the event snapshot has it too (the live table reads the snapshots). */
  live: boolean;
}

/** What the dashboard shows of an area's transactions, from its data declaration (module.ts AreaData). */
export function dashboardData(data: AreaData | undefined): Pick<DashboardArea, "fields" | "searched"> {
  const fields = (data?.fields ?? []).flatMap((f): DashboardField[] =>
    f.dashboard === undefined
      ? []
      : [
          {
            name: f.name,
            ...(f.snapshot?.select === undefined ? {} : { select: f.snapshot.select }),
            label: f.dashboard.label,
            show: f.dashboard.show ?? "text",
            ...(f.dashboard.reference === undefined ? {} : { reference: f.dashboard.reference }),
            live: f.snapshot !== undefined,
          },
        ],
  );
  return { fields, searched: data?.ref?.search !== undefined };
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

const VENDOR_CACHE = "public, max-age=3600";

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
      linkSimulatorUrl: opts.simulators ? `${opts.baseUrl}/sim/payway/` : null,
      areas: opts.areas,
      controls: opts.controls,
    });
  });
  // Compressed and kept in memory (src/cache/static-assets.ts); vendored scripts for an hour, the dashboard's own
  // files revalidated on every load (their ETag answers 304).
  const graphqlWs = inFolder(graphqlWsDir());
  // Only the client and its one shared chunk.
  r.use(
    "/vendor/graphql-ws",
    serveAssets((path) => (/^\/(client|common-[\w-]+)\.js$/.test(path) ? graphqlWs(path) : null), VENDOR_CACHE),
  );
  // Only the one-file build the overview page loads.
  const charts = join(chartJsDir(), "chart.umd.min.js");
  r.use(
    "/vendor/chart.js",
    serveAssets((path) => (path === "/chart.umd.min.js" ? charts : null), VENDOR_CACHE),
  );
  // /dashboard itself goes to /dashboard/, so the page's relative URLs resolve under it.
  r.get("/", (req, res, next) => {
    const [path, query] = req.originalUrl.split(/\?(.*)/s);
    if (path.endsWith("/")) return next();
    res.redirect(301, `${path}/${query === undefined ? "" : `?${query}`}`);
  });
  // js/money.js is the one Money rule the server uses too (src/money/money.ts, compiled).
  r.use(serveAssets(moneyModuleAt("/js/money.js"), "no-cache"));
  r.use(serveAssets(inFolder(publicDir(), "index.html"), "no-cache"));
  return r;
}
