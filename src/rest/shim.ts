import express, { type ErrorRequestHandler, type Request, type Response, type Router } from "express";
import { AppError, type ErrorCode, type FieldError } from "../errors.js";
import { requireKey, type GqlContext } from "../graphql/context.js";
import type { GraphQLEdge } from "../graphql/server.js";
import { httpStatusFor, UNAVAILABLE_MESSAGE } from "../graphql/errors.js";
import { databaseUnavailable } from "../db/unavailable.js";
import type { RestRoute } from "./route-table.js";

export const BODY_LIMIT = "64kb";

export function sendError(res: Response, status: number, code: ErrorCode | string, message: string, details: FieldError[] = [], extra: Record<string, unknown> = {}): void {
  res.status(status).json({ error: { code, message, details, ...extra } });
}

/** JSON-only bodies, 64 KiB, every failure answered with the documented error body. */
export function jsonBody(): express.RequestHandler[] {
  return [
    (req, res, next) => {
      if (req.method === "POST" && !req.is("application/json")) {
        sendError(res, 400, "BAD_USER_INPUT", "Content-Type must be application/json", [{ field: "content-type", message: "must be application/json" }]);
        return;
      }
      next();
    },
    express.json({ limit: BODY_LIMIT, strict: true }),
  ];
}

export const bodyErrors: ErrorRequestHandler = (err: { type?: string; status?: number }, _req, res, next) => {
  if (err?.type === "entity.too.large") return sendError(res, 413, "BAD_USER_INPUT", `Request body is larger than ${BODY_LIMIT}`);
  if (err?.type === "entity.parse.failed") return sendError(res, 400, "BAD_USER_INPUT", "Request body is not valid JSON");
  if (err?.type === "encoding.unsupported" || err?.type === "charset.unsupported") return sendError(res, 400, "BAD_USER_INPUT", "Unsupported body encoding");
  if (typeof err?.status === "number" && err.status >= 400 && err.status < 500) return sendError(res, err.status, "BAD_USER_INPUT", "Malformed request");
  next(err);
};

/** The eight contract endpoints, each executing its GraphQL operation on the same schema. */
export function restRouter(routes: RestRoute[], edge: GraphQLEdge): Router {
  const router = express.Router();
  for (const route of routes) {
    const document = route.document === null ? null : edge.prepare(route.document);
    // The key is checked before the body is read, so bad credentials are 401 whatever the body (decisions.md).
    const authenticate = async (req: Request, res: Response, next: express.NextFunction) => {
      const ctx = await edge.contextFor(req.headers, String((req as { id?: unknown }).id ?? ""));
      try {
        requireKey(ctx, route.kind);
      } catch (e) {
        const err = e as AppError;
        return sendError(res, 401, err.code, err.message);
      }
      res.locals.ctx = ctx;
      next();
    };
    router.post(route.path, authenticate, ...jsonBody(), async (req: Request, res: Response) => {
      const ctx = res.locals.ctx as GqlContext;
      const body = req.body;
      if (body === null || typeof body !== "object" || Array.isArray(body)) {
        return sendError(res, 400, "BAD_USER_INPUT", "Request body must be a JSON object");
      }
      if (document === null) return sendError(res, 501, "NOT_IMPLEMENTED", `${route.path} is not implemented yet`);
      const { data, errors } = await edge.run(document, route.variables(body as Record<string, unknown>), ctx);
      if (errors && errors.length > 0) {
        const { code = "INTERNAL", details = [], ...extra } = (errors[0].extensions ?? {}) as { code?: string; details?: FieldError[] } & Record<string, unknown>;
        return sendError(res, httpStatusFor(code), code, errors[0].message, details, extra);
      }
      res.status(200).json(route.shape((data ?? {}) as Record<string, unknown>));
    });
  }
  return router;
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
