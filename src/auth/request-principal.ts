import type { Authenticator } from "./keys.js";
import type { Principal } from "./principal.js";
import { credentialsFromHeaders } from "./credentials.js";

type HeaderBag = Record<string, string | string[] | undefined>;

/**
 * A request's principal, resolved once: the rate limiter, the REST shim's 401 and the GraphQL context each ask for
 * it, and the same request's headers (the same object) get the same answer. Kept only as long as the request's
 * headers are (a WeakMap), so a revocation reaches the next request as before.
 */
export function requestPrincipals(
  auth: Pick<Authenticator, "fromCredentials">,
): (headers: HeaderBag) => Promise<Principal> {
  const resolved = new WeakMap<HeaderBag, Promise<Principal>>();
  return (headers) => {
    let principal = resolved.get(headers);
    if (principal === undefined)
      resolved.set(headers, (principal = auth.fromCredentials(credentialsFromHeaders(headers))));
    return principal;
  };
}
