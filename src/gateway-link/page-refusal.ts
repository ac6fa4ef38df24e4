// What a refused answer of a payment-link page or its API is (pure: status, headers, body in, a verdict out).
// Two refusals look alike, an HTTP 403, and mean opposite things:
// - the provider's edge (Cloudflare) refusing the caller: an HTML page, often with `cf-mitigated: challenge` and a
//   `cf-ray` header. Nothing about the request is wrong; its address or its browser's fingerprint is. The way out is
//   another address (LINK_PROXY) or a browser that does not look automated (LINK_USER_AGENT).
// - the API itself refusing the request's data: JSON such as {"status":{"code":"…","message":"Invalid Data"}} or
//   "Invalid Token". The page's state was stale (aba_data, request_time, __cf_bm): loading the page again fixes it.
// Sources: docs/link-simulator.md "Refusals told apart"; decision 0196.

/** `challenge`: Cloudflare's browser check; `block`: an edge refusal page (Cloudflare's or unrecognised); `page`: the API's JSON. */
export type RefusalKind = "challenge" | "block" | "page";

export interface PageRefusal {
  kind: RefusalKind;
  /** The HTTP status it came with (403, or another that Cloudflare marked as its challenge). */
  status: number;
  /** The API's own code and message (kind `page`), as it wrote them. */
  code: string | null;
  message: string | null;
  /** One line for logs, /readyz and failure reasons. */
  detail: string;
}

/** The answer as read: header names in any case; a header may repeat (arrays). */
export interface RefusedAnswer {
  status: number;
  headers?: Readonly<Record<string, string | readonly string[] | undefined>> | null;
  body: string | null;
}

/** Text Cloudflare's challenge pages carry (the interstitial's title, its script's paths and globals). */
const CHALLENGE_MARKERS = [/<title>\s*Just a moment\.\.\.\s*<\/title>/i, /challenge-platform/i, /cf[-_]chl/i];
/** Text Cloudflare's block pages carry. */
const BLOCK_MARKERS = [/Attention Required! \| Cloudflare/i, /Sorry, you have been blocked/i, /cloudflare/i];

/**
 * The refusal an answer is, or null when it is none: a 403 always is one (of one kind or another); another status
 * only when Cloudflare marks it as its challenge (`cf-mitigated: challenge`, which it also sends with 429 and 503).
 */
export function classifyRefusal(answer: RefusedAnswer): PageRefusal | null {
  const mitigated = header(answer.headers, "cf-mitigated")?.toLowerCase() ?? null;
  if (answer.status !== 403 && mitigated !== "challenge") return null;
  const at = `HTTP ${answer.status}`;
  // Cloudflare's own header wins over whatever the body says: it is set by the edge, never by the origin.
  const edge = (kind: "challenge" | "block", detail: string): PageRefusal => ({
    kind,
    status: answer.status,
    code: null,
    message: null,
    detail,
  });
  if (mitigated === "challenge") return edge("challenge", `${at}: a Cloudflare challenge (cf-mitigated: challenge)`);
  const body = answer.body ?? "";
  const api = apiRefusal(body);
  if (api !== null) {
    const said = [api.code === null ? "" : `code ${api.code}`, api.message === null ? "" : `"${api.message}"`];
    const what = said.filter((s) => s !== "").join(" ") || "no code or message";
    return { kind: "page", status: answer.status, ...api, detail: `${at}: the API refused the request (${what})` };
  }
  const ray = header(answer.headers, "cf-ray");
  const rayText = ray === undefined ? "" : `, cf-ray ${ray}`;
  if (CHALLENGE_MARKERS.some((m) => m.test(body)))
    return edge("challenge", `${at}: a Cloudflare challenge page${rayText}`);
  if (ray !== undefined || BLOCK_MARKERS.some((m) => m.test(body)))
    return edge("block", `${at}: a Cloudflare block page${rayText}`);
  return edge("block", `${at}: a refusal page that is not the API's (${snippet(body)})`);
}

/** Whether a refusal comes from the provider's edge (address or fingerprint), not from the page's own API. */
export function isEdgeRefusal(r: PageRefusal): boolean {
  return r.kind !== "page";
}

/** The API's JSON refusal: `{status: {code, message}}` or `{message}` (PayWay writes both), else null. */
function apiRefusal(body: string): { code: string | null; message: string | null } | null {
  const text = body.trim();
  if (!text.startsWith("{")) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null) return null;
  const record = parsed as Record<string, unknown>;
  const status = typeof record.status === "object" && record.status !== null ? record.status : {};
  const field = (holder: object, name: string): string | null => {
    const v = (holder as Record<string, unknown>)[name];
    return typeof v === "string" || typeof v === "number" ? String(v) : null;
  };
  const code = field(status, "code");
  const message = field(status, "message") ?? field(record, "message");
  return { code, message };
}

function header(headers: RefusedAnswer["headers"], name: string): string | undefined {
  if (!headers) return undefined;
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() !== name || v === undefined) continue;
    return typeof v === "string" ? v : v.join(", ");
  }
  return undefined;
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 80 ? `${flat.slice(0, 80)}…` : flat || "empty body";
}
