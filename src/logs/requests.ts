import type { IncomingMessage, ServerResponse } from "node:http";
import type { Options } from "pino-http";
import type { Config } from "../config.js";
import { logSafeUrl } from "../logger.js";

/** Request lines are for debugging: written only at LOG_LEVEL debug (or trace), or with LOG_REQUESTS=1. */
export function logsRequests(config: Pick<Config, "logLevel" | "log">): boolean {
  if (config.logLevel === "silent") return false;
  return config.log.requests || config.logLevel === "debug" || config.logLevel === "trace";
}

type Req = IncomingMessage & { id?: unknown; originalUrl?: string };

/**
 * One short line per request (`POST /qr/generate 200 12 ms`): the id, method, path and status, never the headers
 * (keys, tokens, cookies) nor a query value (a client token travels as `?token=` for `<img>` tags). A 5xx is a
 * warning without a stack: /readyz answering 503 while starting is expected, and a real failure is logged with its
 * stack where it happens (the error handler).
 */
export function requestLogOptions(): Options {
  const path = (req: Req) => logSafeUrl(req.originalUrl ?? req.url ?? "");
  return {
    customLogLevel: (_req, res, err) => (err !== undefined || res.statusCode >= 500 ? "warn" : "info"),
    customSuccessMessage: (req, res, ms) => `${req.method} ${path(req as Req)} ${res.statusCode} ${Math.round(ms)} ms`,
    customErrorMessage: (req, res) => `${req.method} ${path(req as Req)} ${res.statusCode}`,
    customErrorObject: (_req, _res, _err, val: Record<string, unknown>) => ({ ...val, err: undefined }),
    serializers: {
      req: (req: Req) => ({ id: req.id, method: req.method, url: path(req) }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
    },
  };
}
