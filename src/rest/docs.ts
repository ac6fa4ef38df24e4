import express, { type Router } from "express";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { DemoDocs } from "./demo-examples.js";
import type { FreshExamples } from "./fresh-examples.js";
import { generatedAsset, sendAsset, serveAssets } from "../cache/static-assets.js";

/**
 * `/openapi.json` and the reference page `/docs`, rendered by swagger-ui-dist served from node_modules: no CDN,
 * works offline. The page runs under the dashboard's strict CSP (only our own scripts and styles).
 */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Payment QR Service — REST reference</title>
<link rel="stylesheet" href="/docs/vendor/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/vendor/favicon-32x32.png">
</head>
<body>
<div id="reference"></div>
<script type="application/json" id="docs-config">{{config}}</script>
<script src="/docs/vendor/swagger-ui-bundle.js"></script>
<script src="/docs/docs.js"></script>
</body>
</html>
`;

// In demo mode the page carries the demo keys (the demo listens on loopback and prints them anyway) and is
// authorised with them once rendered; elsewhere "Authorize" asks for each kind of key. Every Execute of a path with
// fresh fields (config.fresh, rest/fresh-examples.ts) sends new values where the body still holds the example's.
const INIT = `var config = JSON.parse(document.getElementById("docs-config").textContent);
function dig(o, path) {
  return path.split(".").reduce(function (v, k) { return v != null && typeof v === "object" ? v[k] : undefined; }, o);
}
function put(o, path, value) {
  var keys = path.split(".");
  var last = keys.pop();
  var at = dig(o, keys.join("."));
  if (keys.length === 0) at = o;
  if (at != null && typeof at === "object") at[last] = value;
}
function exampleOf(path) {
  var ex = window.ui.specSelectors.specJson().getIn(["paths", path, "post", "requestBody", "content", "application/json", "example"]);
  return ex && ex.toJS ? ex.toJS() : ex;
}
function freshen(req) {
  var path = new URL(req.url, location.href).pathname;
  var fields = (config.fresh || {})[path];
  if (!fields || typeof req.body !== "string") return req;
  var body;
  try { body = JSON.parse(req.body); } catch (e) { return req; }
  var example = exampleOf(path);
  var stale = fields.filter(function (f) {
    var v = dig(body, f);
    return typeof v === "string" && (v === dig(example, f) || /^\\{\\{\\w+\\}\\}$/.test(v));
  });
  if (stale.length === 0) return req;
  return fetch("/docs/fresh.json", { cache: "no-store" })
    .then(function (r) { return r.json(); })
    .then(function (values) {
      stale.forEach(function (f) { put(body, f, values[path][f]); });
      req.body = JSON.stringify(body, null, 2);
      return req;
    })
    .catch(function () { return req; });
}
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#reference",
  deepLinking: true,
  tryItOutEnabled: true,
  validatorUrl: null,
  defaultModelsExpandDepth: 0,
  requestInterceptor: freshen,
  onComplete: function () {
    Object.keys(config.keys || {}).forEach(function (scheme) {
      window.ui.preauthorizeApiKey(scheme, config.keys[scheme]);
    });
  },
});
`;

function swaggerDir(): string {
  return dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
}

/** `demo`: live examples and the demo keys (demo mode only); `fresh`: example values made new on each Execute. */
export function docsRouter(
  document: () => Record<string, unknown>,
  demo: DemoDocs | null = null,
  fresh: FreshExamples | null = null,
): Router {
  const r = express.Router();
  // Built once and compressed (220 KB as text, 20 KB in brotli), except the demo's, which has a fresh order id
  // for each generate example: built per request.
  const json = generatedAsset(() => JSON.stringify(document(), null, 2), ".json");
  r.get("/openapi.json", async (req, res, next) => {
    try {
      res.setHeader("access-control-allow-origin", "*");
      if (demo === null) return sendAsset(req, res, await json(), "no-cache");
      res.type("application/json").send(JSON.stringify(await demo.document(document()), null, 2));
    } catch (err) {
      next(err);
    }
  });
  r.use("/docs", (_req, res, next) => {
    res.setHeader("content-security-policy", CSP);
    res.setHeader("referrer-policy", "no-referrer");
    res.setHeader("x-content-type-options", "nosniff");
    next();
  });
  r.get(["/docs", "/docs/"], (_req, res) => {
    const config = JSON.stringify({ keys: demo?.keys() ?? {}, fresh: fresh?.fields ?? {} }).replace(/</g, "\\u003c");
    res.type("html").send(PAGE.replace("{{config}}", () => config));
  });
  r.get("/docs/docs.js", (_req, res) => void res.type("application/javascript").send(INIT));
  r.get("/docs/fresh.json", (_req, res) => {
    res.setHeader("cache-control", "no-store");
    res.json(fresh?.values() ?? {});
  });
  // Only the renderer's bundle, stylesheet and icon, compressed and kept in memory.
  const dir = swaggerDir();
  const vendor = /^\/(swagger-ui-bundle\.js|swagger-ui\.css|favicon-32x32\.png)$/;
  r.use(
    "/docs/vendor",
    serveAssets((path) => (vendor.test(path) ? join(dir, path) : null), "public, max-age=3600"),
  );
  return r;
}
