import { AppError } from "../errors.js";
import type { KeyKindSpec } from "../auth/key-kinds.js";
import type { KeyPrincipal, Principal } from "../auth/principal.js";
import type { ResolverContainer } from "./container.js";

export interface GqlContext {
  principal: Principal;
  /** This app's resolver instances (type-graphql asks it for each resolver class). */
  container: ResolverContainer;
  requestId: string;
  /** From the `Idempotency-Key` header on HTTP requests. */
  idempotencyKey?: string;
  /** The operation's time budget (GraphQL over HTTP only): past `at`, fields still to resolve fail (field-gate.ts). */
  deadline?: { at: number; budgetMs: number };
}

/**
 * Resolvers call these first: authorise, then one service call (thin edges: the rules live in services). An area's
 * resolver passes its own key kind (the one its area definition declares).
 */
export function requireKey(ctx: GqlContext, key: Pick<KeyKindSpec, "kind" | "authType">): KeyPrincipal {
  const p = ctx.principal;
  if (p.type !== "key" || p.kind !== key.kind) throw new AppError("UNAUTHENTICATED", keyProblem(p, key));
  return p;
}

/**
 * Why the credentials do not open an operation of this kind of key, naming the header to fix as REST's 401 does
 * (rest/key-check.ts; decision 0241): a missing x-api-key, a missing or unknown x-auth-type, a key that is not
 * valid, a key of another area, or a bearer token where a key is wanted.
 */
function keyProblem(p: Principal, key: Pick<KeyKindSpec, "kind" | "authType">): string {
  const want = `x-auth-type: ${key.authType}`;
  if (p.type === "key")
    return `This API key is for the ${p.kind} area; this operation needs a key of its own kind, sent with ${want}`;
  if (p.type !== "anonymous")
    return `This operation takes an API key in x-api-key with ${want}, not an Authorization bearer token`;
  if (p.keyKind !== undefined)
    return `This API key is for the ${p.keyKind} area; this operation needs a key of its own kind, sent with ${want}`;
  if (p.reason === "missing x-api-key")
    return `The x-api-key header is missing: send your API key in x-api-key, with ${want}`;
  if (p.reason === "missing or unknown x-auth-type")
    return `The x-auth-type header is missing or unknown: this operation takes ${want}`;
  if (p.reason === "invalid API key")
    return `The API key in x-api-key is not valid (unknown or revoked); this operation takes a key sent with ${want}`;
  return `The Authorization bearer token is not valid; this operation takes an API key in x-api-key with ${want}`;
}

export function requireAdmin(ctx: GqlContext): void {
  if (ctx.principal.type !== "admin")
    throw new AppError("UNAUTHENTICATED", "The admin token is required (Authorization: Bearer <ADMIN_TOKEN>)");
}
