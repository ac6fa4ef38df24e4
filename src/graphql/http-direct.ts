import type { Request, Response } from "express";
import { execute, getOperationAST, type GraphQLFormattedError } from "graphql";
import type { GqlContext } from "./context.js";
import type { GraphQLAdmission } from "./admission.js";
import type { FailureLog } from "./edge.js";
import { formatExecutionError, shapeAnswer } from "./answer.js";
import { runCompiled } from "./compiled.js";

// The direct door of /graphql over HTTP: a plain POST of a JSON body runs through graphql-js with the admission's
// document (parsed and validated once per text, the first time by Apollo) and verdict (once per operation and view),
// the way the REST shim runs its fixed documents (list reads compiled where that answers without an error: compiled.ts,
// docs/decisions/0259-compiled-list-reads.md). Whatever it does not answer goes to Apollo Server, which answers it exactly as before:
// GET (and the landing page), persisted queries and other extensions, batches and malformed bodies, CSRF refusals,
// other Accept headers, and every request that is refused before it runs (syntax, validation, an operation that
// cannot be identified or is refused, variables that do not coerce). Refusals stay Apollo's, so their shapes and
// statuses cannot drift; they cost a second parse, on the path nobody is fast on.
// docs/decisions/0238-one-graphql-execution-path.md.

/** Accept headers answered here, with the content type Apollo chooses for each (others: Apollo negotiates). */
const CONTENT_TYPES: Record<string, string> = {
  "": "application/json; charset=utf-8",
  "*/*": "application/json; charset=utf-8",
  "application/json": "application/json; charset=utf-8",
  // What Apollo Client and graphql-request send.
  "application/graphql-response+json, application/json;q=0.9": "application/graphql-response+json; charset=utf-8",
  "application/graphql-response+json,application/json;q=0.9": "application/graphql-response+json; charset=utf-8",
};

const BODY_KEYS = new Set(["query", "operationName", "variables"]);

export interface DirectRequest {
  query: string;
  operationName: string | undefined;
  variables: Record<string, unknown> | undefined;
  contentType: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The request when the direct door may answer it, else null (Apollo answers). */
export function directRequest(req: Request): DirectRequest | null {
  if (req.method !== "POST" || req.is("application/json") !== "application/json") return null;
  const contentType = CONTENT_TYPES[req.headers.accept ?? ""];
  const body: unknown = req.body;
  if (contentType === undefined || !isRecord(body)) return null;
  for (const key in body) if (!BODY_KEYS.has(key)) return null;
  const { query, operationName, variables } = body;
  if (typeof query !== "string" || query === "") return null;
  if (operationName != null && typeof operationName !== "string") return null;
  if (variables != null && !isRecord(variables)) return null;
  return { query, operationName: operationName ?? undefined, variables: variables ?? undefined, contentType };
}

export interface DirectDeps {
  admission: GraphQLAdmission;
  limits: { maxResponseBytes: number; timeBudgetMs: number };
  exposeInternals: boolean;
  logFailure: FailureLog;
}

/**
 * Runs an admitted operation and answers; false (nothing sent, nothing run) when Apollo must answer instead.
 */
export async function answerDirect(
  deps: DirectDeps,
  request: DirectRequest,
  ctx: GqlContext,
  res: Response,
): Promise<boolean> {
  const { admission } = deps;
  // A text seen for the first time goes to Apollo, whose validation (the same rules) makes it known: a document is
  // parsed and validated once, and an invalid one is never parsed twice.
  const document = admission.known(request.query);
  if (document === undefined) return false;
  const operation = getOperationAST(document, request.operationName);
  if (operation == null || operation.operation === "subscription") return false;
  const { operationName, variables } = request;
  if (admission.operation({ document, operationName, variables, principal: ctx.principal, transport: "http" }) !== null)
    return false;
  ctx.deadline = { at: Date.now() + deps.limits.timeBudgetMs, budgetMs: deps.limits.timeBudgetMs };
  // A list read runs compiled where it answers without an error (compiled.ts); everything else through graphql-js.
  const result =
    (await runCompiled(admission.schema, document, operation, request, ctx)) ??
    (await execute({
      schema: admission.schema,
      document,
      operationName,
      variableValues: variables,
      contextValue: ctx,
    }));
  // No data: the variables did not coerce and nothing ran; Apollo answers with its own words for that.
  if (result.data === undefined) return false;
  let status = 200;
  let errors: GraphQLFormattedError[] | undefined;
  if (result.errors?.length) {
    errors = result.errors.map((e) => {
      const f = formatExecutionError(
        e,
        "INTERNAL_SERVER_ERROR",
        deps.exposeInternals,
        deps.logFailure,
        "a GraphQL operation",
      );
      if (f.status !== undefined) status = f.status;
      return f.formatted;
    });
  }
  const answer = shapeAnswer({ errors, data: result.data }, deps.limits.maxResponseBytes);
  res.status(answer.status ?? status);
  res.setHeader("content-type", request.contentType);
  res.send(`${answer.text}\n`);
  return true;
}
