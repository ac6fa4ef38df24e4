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
  if (p.type !== "key" || p.kind !== key.kind) {
    throw new AppError("UNAUTHENTICATED", `A valid API key with x-auth-type ${key.authType} is required`);
  }
  return p;
}

export function requireAdmin(ctx: GqlContext): void {
  if (ctx.principal.type !== "admin")
    throw new AppError("UNAUTHENTICATED", "The admin token is required (Authorization: Bearer <ADMIN_TOKEN>)");
}
