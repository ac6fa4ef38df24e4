import type { KeyKind } from "../auth/api-key.entity.js";
import { credentialsFromHeaders } from "../auth/credentials.js";
import type { Principal } from "../auth/principal.js";
import type { KeyKinds } from "../auth/key-kinds.js";

type HeaderBag = Record<string, string | string[] | undefined>;

/**
 * Why a REST request's credentials do not open this route, in the words of its headers, or null when they do.
 * A missing key, a wrong x-auth-type, a key of another area and an unknown key each read differently, so an
 * integrator sees which header to fix; none of them says anything about any key but the caller's own.
 */
export function restKeyProblem(
  principal: Principal,
  headers: HeaderBag,
  kind: KeyKind,
  kinds: KeyKinds,
): string | null {
  if (principal.type === "key" && principal.kind === kind) return null;
  const mine = kinds.of(kind);
  const want = `x-auth-type: ${mine.authType}`;
  const area = mine.paths;
  const creds = credentialsFromHeaders(headers);
  const theirs =
    principal.type === "key" ? principal.kind : principal.type === "anonymous" ? principal.keyKind : undefined;
  const other = theirs === undefined || theirs === kind ? undefined : kinds.get(theirs);
  if (other !== undefined)
    return (
      `This API key is for ${other.paths} (x-auth-type: ${other.authType}); ${area} needs a key of its ` +
      `own kind, sent with ${want}`
    );
  // A bearer token (admin or client) is read before any key, so the key beside it is never looked at.
  if (creds.bearer !== undefined && creds.bearer !== "")
    return `${area} takes an API key in x-api-key with ${want}, not an Authorization bearer token`;
  if (creds.apiKey === undefined || creds.apiKey === "")
    return `The x-api-key header is missing: send your API key for ${area} in x-api-key, with ${want}`;
  if (creds.authType === undefined || creds.authType === "")
    return `The x-auth-type header is missing: ${area} takes ${want}`;
  if (kinds.kindOfAuthType(creds.authType) !== kind) {
    const got = kinds.kindOfAuthType(creds.authType) !== undefined ? `"${creds.authType}"` : "an unknown value";
    return `x-auth-type must be ${mine.authType} on ${area} (got ${got})`;
  }
  return `The API key in x-api-key is not valid (unknown or revoked); ${area} takes a key created for it`;
}
