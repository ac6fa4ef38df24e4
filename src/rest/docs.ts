import express, { type Router } from "express";
import { createRequire } from "node:module";
import { dirname } from "node:path";

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
<script src="/docs/vendor/swagger-ui-bundle.js"></script>
<script src="/docs/docs.js"></script>
</body>
</html>
`;

// Demo keys are not put into the page: "Authorize" takes the key from demo.json, as the README says.
const INIT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#reference",
  deepLinking: true,
  tryItOutEnabled: true,
  validatorUrl: null,
  defaultModelsExpandDepth: 0,
});
`;

function swaggerDir(): string {
  return dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
}

export function docsRouter(document: () => unknown): Router {
  const r = express.Router();
  let json: string | null = null;
  r.get("/openapi.json", (_req, res) => {
    json ??= JSON.stringify(document(), null, 2);
    res.setHeader("access-control-allow-origin", "*");
    res.type("application/json").send(json);
  });
  r.use("/docs", (_req, res, next) => {
    res.setHeader("content-security-policy", CSP);
    res.setHeader("referrer-policy", "no-referrer");
    res.setHeader("x-content-type-options", "nosniff");
    next();
  });
  r.get(["/docs", "/docs/"], (_req, res) => void res.type("html").send(PAGE));
  r.get("/docs/docs.js", (_req, res) => void res.type("application/javascript").send(INIT));
  const vendor = express.static(swaggerDir(), { index: false, fallthrough: false, maxAge: "1h" });
  r.use("/docs/vendor", (req, res, next) => {
    // Only the renderer's bundle, stylesheet and icon.
    if (!/^\/(swagger-ui-bundle\.js|swagger-ui\.css|favicon-32x32\.png)$/.test(req.path)) return next();
    vendor(req, res, next);
  });
  return r;
}
