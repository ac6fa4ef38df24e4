import { AppError } from "../errors.js";
import type { KeyKind } from "../auth/api-key.entity.js";
import type { KeyPrincipal, Principal } from "../auth/principal.js";
import type { ResolverContainer } from "./container.js";

export interface GqlContext {
  principal: Principal;
  /** This app's resolver instances (type-graphql asks it for each resolver class). */
  container: ResolverContainer;
  requestId: string;
  /** From the `Idempotency-Key` header on HTTP requests. */
  idempotencyKey?: string;
}

const KIND_HEADER: Record<KeyKind, string> = {
  qr: "api-key",
  gateway: "api-gateway",
  gateway_link: "api-gateway-link",
};

/** Resolvers call these first: authorise, then one service call (thin edges: the rules live in services). */
export function requireKey(ctx: GqlContext, kind: KeyKind): KeyPrincipal {
  const p = ctx.principal;
  if (p.type !== "key" || p.kind !== kind) {
    throw new AppError("UNAUTHENTICATED", `A valid API key with x-auth-type ${KIND_HEADER[kind]} is required`);
  }
  return p;
}

export function requireAdmin(ctx: GqlContext): void {
  if (ctx.principal.type !== "admin")
    throw new AppError("UNAUTHENTICATED", "The admin token is required (Authorization: Bearer <ADMIN_TOKEN>)");
}
