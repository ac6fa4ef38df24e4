type HeaderBag = Record<string, string | string[] | undefined>;

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Only the blanks HTTP itself allows around a value (space, tab). String.trim() also removed Unicode spaces
 * (0xA0 among them), so a key with such bytes appended authenticated as the key while looking like another.
 */
const blanks = (v: string | undefined) => v?.replace(/^[ \t]+|[ \t]+$/g, "");

/** The credential headers (docs/api.md): x-api-key + x-auth-type, or Authorization: Bearer (admin token or clientToken). */
export function credentialsFromHeaders(headers: HeaderBag): { apiKey?: string; authType?: string; bearer?: string } {
  const auth = one(headers.authorization);
  const bearer = auth !== undefined && /^bearer /i.test(auth) ? blanks(auth.slice(7)) : undefined;
  return {
    apiKey: blanks(one(headers["x-api-key"])),
    authType: blanks(one(headers["x-auth-type"]))?.toLowerCase(),
    bearer,
  };
}

/** The same pairs in a graphql-ws `connection_init` payload (any key case; clientToken allowed). */
export function credentialsFromConnectionParams(params: Record<string, unknown> | undefined): {
  apiKey?: string;
  authType?: string;
  bearer?: string;
  clientToken?: string;
} {
  const lower: Record<string, string> = {};
  for (const [k, v] of Object.entries(params ?? {})) if (typeof v === "string") lower[k.toLowerCase()] = v;
  const fromHeaders = credentialsFromHeaders({
    "x-api-key": lower["x-api-key"] ?? lower.apikey,
    "x-auth-type": lower["x-auth-type"] ?? lower.authtype,
    authorization: lower.authorization,
  });
  return { ...fromHeaders, clientToken: lower.clienttoken };
}
