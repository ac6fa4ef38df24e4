import type { ErrorRequestHandler } from "express";

/**
 * Body failures on /graphql (invalid JSON, over 64 KiB, an unsupported encoding) answered as a GraphQL
 * response (`{"errors":[{message, extensions:{code, details}}]}`), as every other /graphql rejection is,
 * rather than with the REST error body.
 */
export const graphqlBodyErrors: ErrorRequestHandler = (
  err: { type?: string; status?: number; key?: string },
  _req,
  res,
  next,
) => {
  let status: number;
  let message: string;
  if (err?.type === "entity.too.large") [status, message] = [413, "Request body is larger than 64kb"];
  else if (err?.type === "entity.parse.failed") [status, message] = [400, "Request body is not valid JSON"];
  else if (err?.type === "entity.duplicate.key")
    [status, message] = [400, `Request body has the key "${err.key}" twice in one object`];
  else if (err?.type === "encoding.unsupported" || err?.type === "charset.unsupported")
    [status, message] = [400, "Unsupported body encoding"];
  else if (typeof err?.status === "number" && err.status >= 400 && err.status < 500)
    [status, message] = [400, "Malformed request"];
  else return next(err);
  res.status(status).json({ errors: [{ message, extensions: { code: "BAD_USER_INPUT", details: [] } }] });
};
