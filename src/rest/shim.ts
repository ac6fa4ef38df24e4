import express, { type ErrorRequestHandler, type Request, type Response, type Router } from "express";
import { AppError, type ErrorCode, type FieldError } from "../errors.js";
import type { GqlContext } from "../graphql/context.js";
import type { GraphQLEdge } from "../graphql/edge.js";
import { httpStatusFor, UNAVAILABLE_MESSAGE } from "../graphql/errors.js";
import { databaseUnavailable } from "../db/unavailable.js";
import type { RestRoute } from "./route-table.js";
import { annotate, duplicateKey, stringifyExact } from "../exact-json.js";
import {
  bodyFields,
  dropUnknown,
  ignoredFieldsHeader,
  IGNORED_FIELDS_HEADER,
  refusedFields,
  REFUSAL_SCAN_MAX_VALUES,
} from "./body-fields.js";
import { bodyShape, bodyTypeProblems } from "./body-types.js";
import { restKeyProblem } from "./key-check.js";
import type { KeyKinds } from "../auth/key-kinds.js";

export const BODY_LIMIT = "64kb";

export function sendError(
  res: Response,
  status: number,
  code: ErrorCode | string,
  message: string,
  details: FieldError[] = [],
  extra: Record<string, unknown> = {},
): void {
  res.status(status).json({ error: { code, message, details, ...extra } });
}

/** The UTF-8 text of each parsed body, until its objects have been annotated with it. */
const bodyTexts = new WeakMap<Request, string>();

/**
 * express.json, with every object of the body remembering its exact text (key order, number text), so meta
 * is stored and returned exactly as sent (src/exact-json.ts). Used for the REST endpoints and /graphql.
 */
export function jsonParser(limit: string): express.RequestHandler[] {
  return [
    express.json({
      limit,
      strict: true,
      verify: (req, _res, buf, encoding) => {
        if (/^utf-?8$/i.test(encoding)) bodyTexts.set(req as Request, buf.toString("utf8"));
      },
    }),
    (req, _res, next) => {
      const text = bodyTexts.get(req);
      bodyTexts.delete(req);
      // One value per key: a repeated key (a second "amount") is refused, never silently the last one.
      const dup = text === undefined ? null : duplicateKey(text);
      if (dup !== null)
        return next(Object.assign(new Error("duplicate key"), { type: "entity.duplicate.key", status: 400, key: dup }));
      if (text !== undefined && req.body !== null && typeof req.body === "object") annotate(req.body, text);
      next();
    },
  ];
}

/** A JSON answer in which meta (and any other value read with its exact text) is written exactly as it was read. */
export function sendJson(res: Response, status: number, value: unknown): void {
  res.status(status).type("application/json").send(stringifyExact(value));
}

/** JSON-only bodies, 64 KiB, every failure answered with the documented error body. */
export function jsonBody(): express.RequestHandler[] {
  return [
    (req, res, next) => {
      if (req.method === "POST" && !req.is("application/json")) {
        sendError(res, 400, "BAD_USER_INPUT", "Content-Type must be application/json", [
          { field: "content-type", message: "must be application/json" },
        ]);
        return;
      }
      next();
    },
    ...jsonParser(BODY_LIMIT),
  ];
}

export const bodyErrors: ErrorRequestHandler = (
  err: { type?: string; status?: number; key?: string },
  _req,
  res,
  next,
) => {
  if (err?.type === "entity.too.large")
    return sendError(res, 413, "BAD_USER_INPUT", `Request body is larger than ${BODY_LIMIT}`);
  if (err?.type === "entity.parse.failed")
    return sendError(res, 400, "BAD_USER_INPUT", "Request body is not valid JSON");
  if (err?.type === "entity.duplicate.key")
    return sendError(res, 400, "BAD_USER_INPUT", `Request body has the key "${err.key}" twice in one object`, [
      { field: String(err.key), message: "appears more than once" },
    ]);
  if (err?.type === "encoding.unsupported" || err?.type === "charset.unsupported")
    return sendError(res, 400, "BAD_USER_INPUT", "Unsupported body encoding");
  if (typeof err?.status === "number" && err.status >= 400 && err.status < 500)
    return sendError(res, err.status, "BAD_USER_INPUT", "Malformed request");
  next(err);
};

/** The eight contract endpoints, each executing its GraphQL operation on the same schema. */
export function restRouter(routes: RestRoute[], edge: GraphQLEdge, kinds: KeyKinds): Router {
  const router = express.Router();
  for (const route of routes) {
    const document = route.document === null ? null : edge.prepare(route.document);
    const fields = document === null ? null : bodyFields(edge.schema, document, route.bodyVariable);
    const shape = document === null ? [] : bodyShape(edge.schema, document, route.bodyVariable);
    // The key is checked before the body is read, so bad credentials are 401 whatever the body
    // (docs/decisions/0008-rest-401-before-anything-else.md).
    const authenticate = async (req: Request, res: Response, next: express.NextFunction) => {
      const ctx = await edge.contextFor(req.headers, String((req as { id?: unknown }).id ?? ""));
      const problem = restKeyProblem(ctx.principal, req.headers, route.kind, kinds);
      if (problem !== null) return sendError(res, 401, "UNAUTHENTICATED", problem);
      res.locals.ctx = ctx;
      next();
    };
    router.post(route.path, authenticate, ...jsonBody(), async (req: Request, res: Response) => {
      const ctx = res.locals.ctx as GqlContext;
      const body = req.body;
      if (body === null || typeof body !== "object" || Array.isArray(body)) {
        return sendError(res, 400, "BAD_USER_INPUT", "Request body must be a JSON object");
      }
      if (document === null || fields === null)
        return sendError(res, 501, "NOT_IMPLEMENTED", `${route.path} is not implemented yet`);
      // Legacy integrators send fields the contract does not know: ignored and named in a header, never refused
      // (GraphQL itself stays strict), except where the route refuses them (a gateway-link target).
      const ignored: { path: string[]; value: unknown }[] = [];
      const known = dropUnknown(body as Record<string, unknown>, fields, ignored);
      const header = ignoredFieldsHeader(ignored.map((i) => i.path));
      if (header !== null) res.setHeader(IGNORED_FIELDS_HEADER, header);
      const refused = route.refuseUnknown ? refusedFields(ignored, route.refuseUnknown.test) : [];
      if (refused === null) {
        // Too many values to check each one: refused whole, never passed on partly checked.
        const field = ignored[0].path.join(".");
        const message = `holds more than ${REFUSAL_SCAN_MAX_VALUES} values in fields the contract does not define: too many to check`;
        return sendError(res, 400, "BAD_USER_INPUT", `Invalid request: ${field} ${message}`, [{ field, message }]);
      }
      if (refused.length > 0 && route.refuseUnknown) {
        const details = refused.map((field) => ({ field, message: route.refuseUnknown?.message ?? "is not accepted" }));
        return sendError(res, 400, "BAD_USER_INPUT", invalidMessage(details), details);
      }
      // The body's types in the body's words, before GraphQL could answer in its own (`Variable "$input" …`).
      const wrong = bodyTypeProblems(known, shape);
      if (wrong.length > 0) return sendError(res, 400, "BAD_USER_INPUT", invalidMessage(wrong), wrong);
      const { data, errors } = await edge.run(document, route.variables(known), ctx);
      if (errors && errors.length > 0) {
        const {
          code = "INTERNAL",
          details = [],
          retryAfter,
          ...extra
        } = (errors[0].extensions ?? {}) as { code?: string; details?: FieldError[] } & Record<string, unknown>;
        // An error that says when to try again (seconds): the Retry-After header, as the rate limiter's 429.
        if (typeof retryAfter === "number") res.setHeader("retry-after", String(retryAfter));
        const message =
          GRAPHQL_WORDS.test(errors[0].message) && details.length > 0 ? invalidMessage(details) : errors[0].message;
        return sendError(res, httpStatusFor(code), code, message, details, extra);
      }
      sendJson(res, 200, route.shape((data ?? {}) as Record<string, unknown>));
    });
    // Every other method on a contract path: 405 naming the one that works (before credentials: it is the path's).
    router.all(route.path, (_req, res) => {
      res.setHeader("allow", "POST");
      sendError(res, 405, "METHOD_NOT_ALLOWED", `${route.path} takes POST with a JSON body`);
    });
  }
  return router;
}

/** A message that speaks of GraphQL variables or types rather than of the JSON body (a last resort: see bodyTypes). */
const GRAPHQL_WORDS = /Variable "\$|non-null type|required type/;

function invalidMessage(details: FieldError[]): string {
  return `Invalid request: ${details.map((d) => `${d.field} ${d.message}`).join("; ")}`;
}

export function notFoundHandler(): express.RequestHandler {
  return (req, res) => sendError(res, 404, "NOT_FOUND", `No route for ${req.method} ${req.path}`);
}

export function internalErrorHandler(log: (err: unknown) => void): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    log(err);
    if (res.headersSent) return;
    if (databaseUnavailable(err)) return sendError(res, 503, "SERVICE_UNAVAILABLE", UNAVAILABLE_MESSAGE);
    sendError(res, 500, "INTERNAL", "Internal error");
  };
}

export { AppError };
