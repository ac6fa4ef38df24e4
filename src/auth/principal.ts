import type { KeyKind } from "./api-key.entity.js";

export interface KeyPrincipal {
  type: "key";
  keyId: string;
  merchantRef: string;
  kind: KeyKind;
  /** What the key is bound to (its area's configuration), for a kind that binds its keys. */
  targetRef: string | null;
}

/** A browser holding one transaction's clientToken: the checkout view of that transaction only. */
export interface ClientPrincipal {
  type: "client";
  transactionId: string;
  /** Epoch milliseconds; at most CLIENT_TOKEN_MAX_MS after issue. */
  expiresAt: number;
  /** The key that created the transaction: the token dies with it. */
  keyId: string;
}

/** Who is calling: an API key, the operator (ADMIN_TOKEN), a browser holding one transaction's clientToken, or nobody. */
export type Principal = KeyPrincipal | { type: "admin" } | ClientPrincipal | AnonymousPrincipal;

/** No credential that holds here. `keyKind`: the key is valid, but for another area than x-auth-type names. */
export interface AnonymousPrincipal {
  type: "anonymous";
  reason: string;
  keyKind?: KeyKind;
}
