import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import type { Socket } from "node:net";
import type { Request, RequestHandler, Response } from "express";

/**
 * The static files this service serves (the renderers of /docs and /graphiql, the dashboard's and the checkout's
 * own files and their vendored scripts), read once per process and kept in memory with their brotli and gzip
 * forms and a strong ETag for each (docs/decisions/0175-static-assets-compressed-and-cached.md). A client gets
 * the smallest form its Accept-Encoding allows — swagger-ui's 1.7 MB bundle is 392 KB in brotli, 460 KB in gzip —
 * so an answer sits in the system's buffers for a quarter of the time and space; `If-None-Match` gets a 304.
 */

export type Coding = "br" | "gzip" | "identity";

interface Form {
  coding: Coding;
  body: Buffer;
  etag: string;
}

/** One file as it is served: its content type, and its forms, smallest first (identity last). */
export interface Asset {
  type: string;
  forms: Form[];
}

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
};
const COMPRESSIBLE = /^(text\/|application\/json|image\/svg)/;
/** Below this, a compressed form saves less than its headers cost. */
const MIN_COMPRESS_BYTES = 1024;

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/**
 * Brotli at quality 9: within 10 % of its best (11) on swagger-ui's bundle, in 110 ms instead of 3.7 s, once per
 * file and process, off the event loop.
 */
async function formsOf(body: Buffer, type: string): Promise<Form[]> {
  const tag = createHash("sha256").update(body).digest("base64url").slice(0, 22);
  const identity: Form = { coding: "identity", body, etag: `"${tag}"` };
  if (!COMPRESSIBLE.test(type) || body.length < MIN_COMPRESS_BYTES) return [identity];
  const [br, gz] = await Promise.all([
    brotli(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
    gzipped(body, { level: 9 }),
  ]);
  const forms: Form[] = [
    { coding: "br", body: br, etag: `"${tag}-br"` },
    { coding: "gzip", body: gz, etag: `"${tag}-gz"` },
  ];
  // A form that saves under a tenth is not worth a client's decoding.
  return [
    ...forms.filter((f) => f.body.length < body.length * 0.9).sort((a, b) => a.body.length - b.body.length),
    identity,
  ];
}

/** Every file read so far, by absolute path; a failed read is not kept (a wrong path must not grow the map). */
const files = new Map<string, Promise<Asset>>();

/** The file at `path`, from memory after its first read. */
export function assetOf(path: string): Promise<Asset> {
  let found = files.get(path);
  if (found === undefined) {
    const type = TYPES[extname(path).toLowerCase()] ?? "application/octet-stream";
    found = readFile(path).then((body) => formsOf(body, type).then((forms) => ({ type, forms })));
    files.set(path, found);
    found.catch(() => files.delete(path));
  }
  return found;
}

/**
 * A document made in memory once (the OpenAPI document, the explorer's schema), served like a file: built and
 * compressed on first use, per router (each app has its own).
 */
export function generatedAsset(make: () => string, ext: string): () => Promise<Asset> {
  let asset: Promise<Asset> | null = null;
  const type = TYPES[ext] ?? "application/octet-stream";
  return () =>
    (asset ??= Promise.resolve()
      .then(() => formsOf(Buffer.from(make(), "utf8"), type))
      .then((forms) => ({ type, forms })));
}

/**
 * The form a client's Accept-Encoding asks for (RFC 9110, 12.5.3): the highest q-value among those we have, the
 * smaller form on a tie; identity when it accepts no other — even when it refuses identity too.
 * No header: identity, as every client understands it.
 */
export function chooseForm(acceptEncoding: string | undefined, forms: Form[]): Form {
  const identity = forms[forms.length - 1];
  if (acceptEncoding === undefined || forms.length === 1) return identity;
  const q = new Map<string, number>();
  for (const part of acceptEncoding.toLowerCase().split(",")) {
    const [name, ...params] = part.split(";").map((p) => p.trim());
    if (name === "") continue;
    const qParam = params.find((p) => p.startsWith("q="));
    const value = qParam === undefined ? 1 : Number(qParam.slice(2));
    q.set(name === "x-gzip" ? "gzip" : name, Number.isFinite(value) ? value : 0);
  }
  const star = q.get("*");
  // Identity is acceptable unless refused, but only as the fallback: a client that lists gzip at q=0.8 wants it.
  const qOf = (f: Form) =>
    q.get(f.coding) ?? (f.coding === "identity" ? (star === 0 ? 0 : Number.MIN_VALUE) : (star ?? 0));
  // Smallest first: on a tie the smaller form wins.
  let best = identity;
  let bestQ = 0;
  for (const f of forms)
    if (qOf(f) > bestQ) {
      best = f;
      bestQ = qOf(f);
    }
  return best;
}

/** Whether an If-None-Match header names this tag (weak comparison, as RFC 9110 asks for If-None-Match). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === "*") return true;
  return ifNoneMatch.split(",").some((t) => t.trim().replace(/^W\//, "") === etag);
}

/** An uncompressed answer this large counts against its client address (compressible files only). */
const LARGE_BYTES = 256 * 1024;
/**
 * Connections per client address that may hold a large uncompressed answer at once. A client that refuses every
 * compression is the one way left to make each connection hold the whole file (swagger-ui's 1.7 MB) in the
 * system's buffers; browsers never ask for it.
 */
export const UNCOMPRESSED_PER_ADDRESS = 8;
const uncompressed = new Map<string, number>();
const counted = new WeakSet<Socket>();

/**
 * Counts a large uncompressed answer against its address until its connection closes, or answers 429 when the
 * address already has its share.
 */
function admitUncompressed(req: Request, res: Response, asset: Asset, form: Form): boolean {
  const socket = req.socket;
  if (req.method === "HEAD" || form.body.length < LARGE_BYTES || asset.forms.length === 1 || counted.has(socket))
    return true;
  // The client's budget as the listener's edge keys it (a trusted proxy's forwarded address, IPv6 per /64), else
  // the peer's address.
  const key = String(res.locals.addressBudget ?? socket.remoteAddress ?? "");
  const n = uncompressed.get(key) ?? 0;
  if (n >= UNCOMPRESSED_PER_ADDRESS) {
    res.vary("accept-encoding");
    res.setHeader("retry-after", "10");
    res.setHeader("cache-control", "no-store");
    res.status(429).json({
      error: {
        code: "RATE_LIMITED",
        message:
          `Too many uncompressed downloads of large files from this address at once (${UNCOMPRESSED_PER_ADDRESS}): ` +
          "accept br or gzip (Accept-Encoding), or retry later",
        details: [],
      },
    });
    return false;
  }
  uncompressed.set(key, n + 1);
  counted.add(socket);
  socket.once("close", () => {
    const left = (uncompressed.get(key) ?? 1) - 1;
    if (left <= 0) uncompressed.delete(key);
    else uncompressed.set(key, left);
  });
  return true;
}

/** Answers a GET or HEAD with an asset: the chosen form, its tag, a 304 when the client has it already. */
export function sendAsset(req: Request, res: Response, asset: Asset, cacheControl: string): void {
  const form = chooseForm(req.headers["accept-encoding"], asset.forms);
  const fresh = matches(req.headers["if-none-match"], form.etag);
  if (!fresh && form.coding === "identity" && !admitUncompressed(req, res, asset, form)) return;
  res.setHeader("content-type", asset.type);
  res.setHeader("cache-control", cacheControl);
  if (asset.forms.length > 1) res.vary("accept-encoding");
  res.setHeader("etag", form.etag);
  if (fresh) return void res.status(304).end();
  if (form.coding !== "identity") res.setHeader("content-encoding", form.coding);
  res.setHeader("content-length", form.body.length);
  res.status(200);
  res.end(req.method === "HEAD" ? undefined : form.body);
}

/**
 * A handler for the files `resolve` names by request path (null: not one of ours, the next handler decides),
 * GET and HEAD only. A file that cannot be read falls through as well (a 404 further on).
 */
export function serveAssets(resolve: (path: string) => string | null, cacheControl: string): RequestHandler {
  return (req, res, next) => {
    if (req.method !== "GET" && req.method !== "HEAD") return next();
    const file = resolve(req.path);
    if (file === null) return next();
    assetOf(file).then(
      (asset) => sendAsset(req, res, asset, cacheControl),
      () => next(),
    );
  };
}

/**
 * A resolver for the files of a folder: any plain path inside it (no `..`, no dotfile), `index` for the folder
 * itself. Names that are not files there fall through when read.
 */
export function inFolder(dir: string, index: string | null = null): (path: string) => string | null {
  return (path) => {
    const name = path === "/" || path === "" ? index : path.slice(1);
    if (name === null || name.split("/").some((part) => part === "" || part.startsWith("."))) return null;
    const file = normalize(join(dir, name));
    return file.startsWith(dir.endsWith(sep) ? dir : dir + sep) ? file : null;
  };
}
