import type { KeyKind } from "../auth/api-key.entity.js";
import { credentialsFromHeaders } from "../auth/credentials.js";
import { AUTH_TYPES, type Principal } from "../auth/principal.js";

type HeaderBag = Record<string, string | string[] | undefined>;

const HEADER_OF: Record<KeyKind, string> = Object.fromEntries(
  Object.entries(AUTH_TYPES).map(([header, kind]) => [kind, header]),
) as Record<KeyKind, string>;
const AREA_OF: Record<KeyKind, string> = { qr: "/qr/*", gateway: "/gateway/*", gateway_link: "/gateway-link/*" };

/**
 * Why a REST request's credentials do not open this route, in the words of its headers, or null when they do.
 * A missing key, a wrong x-auth-type, a key of another area and an unknown key each read differently, so an
 * integrator sees which header to fix; none of them says anything about any key but the caller's own.
 */
export function restKeyProblem(principal: Principal, headers: HeaderBag, kind: KeyKind): string | null {
  if (principal.type === "key" && principal.kind === kind) return null;
  const want = `x-auth-type: ${HEADER_OF[kind]}`;
  const area = AREA_OF[kind];
  const creds = credentialsFromHeaders(headers);
  const theirs =
    principal.type === "key" ? principal.kind : principal.type === "anonymous" ? principal.keyKind : undefined;
  if (theirs !== undefined && theirs !== kind)
    return (
      `This API key is for ${AREA_OF[theirs]} (x-auth-type: ${HEADER_OF[theirs]}); ${area} needs a key of its ` +
      `own kind, sent with ${want}`
    );
  // A bearer token (admin or client) is read before any key, so the key beside it is never looked at.
  if (creds.bearer !== undefined && creds.bearer !== "")
    return `${area} takes an API key in x-api-key with ${want}, not an Authorization bearer token`;
  if (creds.apiKey === undefined || creds.apiKey === "")
    return `The x-api-key header is missing: send your API key for ${area} in x-api-key, with ${want}`;
  if (creds.authType === undefined || creds.authType === "")
    return `The x-auth-type header is missing: ${area} takes ${want}`;
  if (AUTH_TYPES[creds.authType] !== kind) {
    const got = creds.authType in AUTH_TYPES ? `"${creds.authType}"` : "an unknown value";
    return `x-auth-type must be ${HEADER_OF[kind]} on ${area} (got ${got})`;
  }
  return `The API key in x-api-key is not valid (unknown or revoked); ${area} takes a key created for it`;
}
