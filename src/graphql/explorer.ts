import type { ApolloServerPlugin } from "@apollo/server";
import express, { type Router } from "express";
import { introspectionFromSchema, type GraphQLSchema } from "graphql";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { generatedAsset, sendAsset, serveAssets } from "../cache/static-assets.js";
import type { SandboxExample } from "./sandbox.js";

/**
 * `/graphiql`: GraphiQL served from node_modules (React and GraphiQL's UMD builds, no CDN), so the API can be
 * explored on a machine without internet, under the same strict CSP as /docs. Queries and mutations go to
 * /graphql over HTTP, subscriptions over graphql-ws on the same path; GraphiQL sends the headers editor's
 * content as the socket's connection payload, so one header (`Authorization: Bearer ct_…`) authorises both.
 */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const require = createRequire(import.meta.url);
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));

/** URL name → file in node_modules: the production builds only. */
const VENDOR: Record<string, string> = {
  "react.production.min.js": join(packageDir("react"), "umd", "react.production.min.js"),
  "react-dom.production.min.js": join(packageDir("react-dom"), "umd", "react-dom.production.min.js"),
  "graphiql.min.js": join(packageDir("graphiql"), "dist", "index.umd.js"),
  "graphiql.css": join(packageDir("graphiql"), "dist", "style.css"),
};

const CSS = `html, body, #graphiql { height: 100%; margin: 0; }
#graphiql > .loading { font: 16px system-ui, sans-serif; padding: 2em; }
`;

/** Reads the editors' start from the page (a JSON block, which the CSP lets through as data) or the URL. */
const INIT = `(async function () {
  var config = JSON.parse(document.getElementById("explorer-config").textContent);
  var params = new URLSearchParams(location.search);
  var ws = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/graphql";
  var fetcher = GraphiQL.createFetcher({ url: location.origin + "/graphql", subscriptionUrl: ws });
  var schema = await (await fetch("/graphiql/schema.json")).json();
  var root = ReactDOM.createRoot(document.getElementById("graphiql"));
  root.render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      schema: schema,
      defaultQuery: config.document,
      query: params.get("query") || undefined,
      variables: params.get("variables") || config.variables,
      headers: params.get("headers") || config.headers,
      defaultEditorToolsVisibility: true,
      shouldPersistHeaders: false,
    }),
  );
})();
`;

const PAGE = (config: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Payment QR Service — GraphQL explorer</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/graphiql/vendor/graphiql.css">
<link rel="stylesheet" href="/graphiql/explorer.css">
</head>
<body>
<div id="graphiql"><p class="loading">Loading the explorer…</p></div>
<script type="application/json" id="explorer-config">${config}</script>
<script src="/graphiql/vendor/react.production.min.js"></script>
<script src="/graphiql/vendor/react-dom.production.min.js"></script>
<script src="/graphiql/vendor/graphiql.min.js"></script>
<script src="/graphiql/explorer.js"></script>
</body>
</html>
`;

/** JSON inside a script element: `<` escaped, so no value can close the element. */
const scriptJson = (v: unknown) => JSON.stringify(v).replace(/</g, "\\u003c");

/**
 * The headers the editor starts with: the demo tenant's key of the example's area when `demoFile`
 * (DATA_DIR/demo.json, demo mode only, written once the tenant exists) can be read; placeholders otherwise.
 */
function startHeaders(demoFile: string | null, sandbox: SandboxExample): Record<string, string> {
  const want = sandbox.demoKey;
  if (demoFile === null || want === null) return sandbox.headers;
  try {
    const demo = JSON.parse(readFileSync(demoFile, "utf8")) as { keys?: Record<string, unknown> };
    const key = demo.keys?.[want.field];
    if (typeof key === "string") return { "x-api-key": key, "x-auth-type": want.authType };
  } catch {
    // not written yet (the demo tenant is created after the server starts), or not demo mode
  }
  return sandbox.headers;
}

export function explorerRouter(opts: {
  demoFile: string | null;
  schema: GraphQLSchema;
  sandbox: SandboxExample;
}): Router {
  const r = express.Router();
  r.use("/graphiql", (_req, res, next) => {
    res.setHeader("content-security-policy", CSP);
    res.setHeader("referrer-policy", "no-referrer");
    res.setHeader("x-content-type-options", "nosniff");
    next();
  });
  r.get(["/graphiql", "/graphiql/"], (_req, res) => {
    const config = {
      document: opts.sandbox.document,
      variables: JSON.stringify(opts.sandbox.variables, null, 2),
      headers: JSON.stringify(startHeaders(opts.demoFile, opts.sandbox), null, 2),
    };
    res.type("html").send(PAGE(scriptJson(config)));
  });
  r.get("/graphiql/explorer.js", (_req, res) => void res.type("application/javascript").send(INIT));
  // The schema for the editors and the docs pane, so GraphiQL needs no introspection with the editor's headers
  // (a clientToken in them may not introspect).
  const schemaJson = generatedAsset(() => JSON.stringify(introspectionFromSchema(opts.schema)), ".json");
  r.get("/graphiql/schema.json", (req, res, next) => {
    schemaJson().then((asset) => sendAsset(req, res, asset, "no-cache"), next);
  });
  r.get("/graphiql/explorer.css", (_req, res) => void res.type("text/css").send(CSS));
  r.use(
    "/graphiql/vendor",
    serveAssets(
      (path) => (Object.hasOwn(VENDOR, path.slice(1)) ? VENDOR[path.slice(1)] : null),
      "public, max-age=3600",
    ),
  );
  return r;
}

const OFFLINE = "it appears that you might be offline.</p>";
const LINK =
  '\n  <p>This service has a GraphQL explorer of its own that needs no internet: <a href="/graphiql">/graphiql</a>.</p>';

/**
 * The notice with the link, and the empty box Sandbox would fill hidden (it lies over the notice, so the link
 * could not be clicked), under the page's own style nonce.
 */
function linkExplorer(html: string): string {
  const nonce = /<style nonce=["']?([\w+/=-]+)/.exec(html)?.[1];
  const unblock =
    nonce === undefined ? "" : `\n<style nonce="${nonce}">#embeddableSandbox:empty { display: none; }</style>`;
  return html.replace(OFFLINE, OFFLINE + LINK + unblock);
}

/**
 * Apollo's landing page plugin, with a link to /graphiql in the text it shows when Sandbox cannot load (offline,
 * or Apollo's CDN blocked): a plain link, so it needs nothing the page's CSP refuses.
 */
export function withExplorerLink(plugin: ApolloServerPlugin): ApolloServerPlugin {
  return {
    ...plugin,
    async serverWillStart(ctx) {
      const listener = await plugin.serverWillStart?.(ctx);
      const render = listener?.renderLandingPage?.bind(listener);
      if (!listener || render === undefined) return listener;
      return {
        ...listener,
        async renderLandingPage() {
          const { html } = await render();
          return {
            html: async () => linkExplorer(typeof html === "string" ? html : await html()),
          };
        },
      };
    },
  };
}
