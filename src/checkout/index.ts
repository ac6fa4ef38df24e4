import express, { type Express, type Response } from "express";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ModuleDefinition, Module } from "../module.js";
import type { AdminService } from "../admin/admin-service.js";
import type { Authenticator } from "../auth/keys.js";
import type { TransactionQuery } from "../transactions/transaction-query.js";
import { AppError } from "../errors.js";
import { credentialsFromHeaders } from "../auth/credentials.js";
import { CheckoutViews } from "./checkout-view.js";
import { inFolder, serveAssets } from "../cache/static-assets.js";
import { moneyModuleAt } from "../money/browser-file.js";

/**
 * The hosted checkout page (`/pay/<id>#token=<clientToken>`, the `checkoutUrl` of every generate answer) and
 * what it is built on, for merchants to embed too: `/checkout/checkout.js` (`watchTransaction` and the
 * `<payment-qr-checkout>` element), its stylesheet, the vendored graphql-ws client, and the checkout view
 * `GET /checkout/view/<id>` (Authorization: Bearer <clientToken>). No framework, no CDN.
 */
export interface CheckoutModuleDeps {
  auth: Pick<Authenticator, "verifyClientToken">;
  query: Pick<TransactionQuery, "one" | "views">;
  admin: Pick<AdminService, "merchant">;
}

const here = dirname(fileURLToPath(import.meta.url));

function publicDir(): string {
  const candidates = [join(here, "public"), join(here, "../../../src/checkout/public")];
  const found = candidates.find((d) => existsSync(join(d, "checkout.js")));
  if (found === undefined) throw new Error(`checkout assets not found (looked in ${candidates.join(", ")})`);
  return found;
}

/**
 * The Khmer face of the page (Noto Sans Khmer, from the @fontsource package: OFL), served from this service — no
 * CDN. Only the Khmer subset in the two weights the page uses; Latin text stays in the system font.
 */
function fontDir(): string {
  return join(dirname(createRequire(import.meta.url).resolve("@fontsource/noto-sans-khmer")), "files");
}
const FONT_FILE = /^\/noto-sans-khmer-khmer-(400|700)-normal\.woff2$/;

// Only our own scripts, styles and fonts; the QR is a data: image; the socket and the view go to this origin.
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; font-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const STATUS: Record<string, number> = { UNAUTHENTICATED: 401, NOT_FOUND: 404 };

function fail(res: Response, err: unknown): void {
  if (err instanceof AppError && err.code in STATUS) {
    res.status(STATUS[err.code]).json({ error: { code: err.code, message: err.message, details: [] } });
    return;
  }
  throw err;
}

export function createCheckoutModule(deps: CheckoutModuleDeps): Module & { views: CheckoutViews } {
  const views = new CheckoutViews(deps.auth, deps.query, deps.admin);
  const assets = publicDir();
  const graphqlWs = dirname(createRequire(import.meta.url).resolve("graphql-ws"));
  return {
    views,
    mount(app: Express) {
      const r = express.Router();
      // Embeddable from a merchant's own origin: a bearer token, no cookies, so any origin may read these.
      r.use("/checkout", (req, res, next) => {
        res.setHeader("access-control-allow-origin", "*");
        res.setHeader("access-control-allow-headers", "authorization");
        res.setHeader("x-content-type-options", "nosniff");
        if (req.method === "OPTIONS") return void res.sendStatus(204);
        next();
      });
      r.get("/checkout/view/:id", async (req, res) => {
        res.setHeader("cache-control", "no-store");
        try {
          res.json(await views.view(req.params.id, credentialsFromHeaders(req.headers).bearer));
        } catch (err) {
          fail(res, err);
        }
      });
      // Compressed and kept in memory (src/cache/static-assets.ts).
      const vendor = inFolder(graphqlWs);
      r.use(
        "/checkout/vendor/graphql-ws",
        serveAssets(
          (path) => (/^\/(client|common-[\w-]+)\.js$/.test(path) ? vendor(path) : null),
          "public, max-age=3600",
        ),
      );
      // checkout.css asks for them with the package's version in the query (?v=5.3.0): a new version is a new URL.
      // (Set here: the app's default for every answer is no-store, and express.static keeps a header already set.)
      const fonts = express.static(fontDir(), { index: false, fallthrough: false });
      r.use("/checkout/fonts", (req, res, next) => {
        if (!FONT_FILE.test(req.path)) return next();
        res.setHeader("cache-control", "public, max-age=31536000, immutable");
        fonts(req, res, next);
      });
      // Our own files: revalidated on every load (their ETag answers 304). money.js is the one Money rule the server
      // uses too (src/money/money.ts, compiled).
      r.use("/checkout", serveAssets(moneyModuleAt("/money.js"), "no-cache"));
      r.use("/checkout", serveAssets(inFolder(assets), "no-cache"));
      r.get("/pay/:id", (_req, res) => {
        res.setHeader("content-security-policy", CSP);
        res.setHeader("referrer-policy", "no-referrer");
        res.setHeader("x-content-type-options", "nosniff");
        res.setHeader("cache-control", "no-store");
        res.sendFile(join(assets, "pay.html"));
      });
      app.use(r);
    },
  };
}

export const checkoutModule: ModuleDefinition<CheckoutModuleDeps, Module & { views: CheckoutViews }> = {
  name: "checkout",
  // The checkout view answers per client token: charged to that token's bucket.
  rateLimited: ["/checkout/view"],
  create: createCheckoutModule,
};
