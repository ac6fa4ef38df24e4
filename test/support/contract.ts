// The contract's answers, written out independently of src (the REST contract's shapes, the error table of README "API in brief",
// the decision records in docs/decisions/): every check returns null when the answer conforms, else a short
// reason.

/** README "API in brief": code ↔ HTTP status. */
export const ERROR_STATUS: Record<string, number> = {
  BAD_USER_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 400,
  UPSTREAM_REJECTED: 400,
  UPSTREAM_UNAVAILABLE: 502,
  RATE_LIMITED: 429,
  IDEMPOTENCY_CONFLICT: 409,
  NOT_IMPLEMENTED: 501,
  METHOD_NOT_ALLOWED: 405,
  INTERNAL: 500,
};

/**
 * What a REST error must never say: GraphQL's variables (`$input`, `Variable "…"`), its non-null marks and type
 * names (`GatewayQrDataInput!`, `Float cannot represent …`). A REST caller sent a JSON body, not a GraphQL operation.
 */
export const GRAPHQL_WORDS =
  /\$\w|\bVariable\b|!|\b[A-Z]\w*Input\b|\b(Float|Int|String|Boolean|JSONObject|ID)\b|non-null/;

/**
 * Extra members an error may carry beyond code/message/details (upstream answers:
 * docs/decisions/0010-error-codes.md, docs/decisions/0160-one-upstream-http-client.md).
 */
const ERROR_EXTRAS: Record<string, string[]> = {
  UPSTREAM_REJECTED: ["upstream", "gatewayStatus"],
  UPSTREAM_UNAVAILABLE: ["upstream", "endpoint", "reason", "transactionId", "status"],
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Keys exactly `required`, plus any of `optional`. */
function keys(o: unknown, required: string[], optional: string[] = []): string | null {
  if (!isObj(o)) return `not an object: ${JSON.stringify(o)?.slice(0, 80)}`;
  for (const k of required) if (!(k in o)) return `missing ${k}`;
  for (const k of Object.keys(o)) if (!required.includes(k) && !optional.includes(k)) return `unexpected member ${k}`;
  return null;
}

function details(d: unknown): string | null {
  if (!Array.isArray(d)) return "details is not an array";
  for (const item of d) {
    const k = keys(item, ["field", "message"]);
    if (k) return `details item: ${k}`;
    if (typeof (item as Obj).field !== "string" || typeof (item as Obj).message !== "string")
      return "details item members are not strings";
  }
  return null;
}

/** `{"error":{"code","message","details":[{"field","message"}]}}` with the status that belongs to the code. */
export function checkErrorBody(status: number, body: unknown): string | null {
  const top = keys(body, ["error"]);
  if (top) return `error body: ${top}`;
  const e = (body as Obj).error as Obj;
  const code = typeof e?.code === "string" ? e.code : "";
  const inner = keys(e, ["code", "message", "details"], ERROR_EXTRAS[code] ?? []);
  if (inner) return `error body: ${inner}`;
  if (!(code in ERROR_STATUS)) return `undocumented error code ${code}`;
  // An oversized body is 413 with the same body (code BAD_USER_INPUT); an oversized header block 431.
  if (ERROR_STATUS[code] !== status && !(code === "BAD_USER_INPUT" && (status === 413 || status === 431)))
    return `code ${code} answered with HTTP ${status}, documented ${ERROR_STATUS[code]}`;
  if (typeof e.message !== "string" || e.message.length === 0) return "error.message is not a non-empty string";
  if (/\bat .+\.(js|ts):\d+|node_modules|select .* from|insert into/i.test(e.message))
    return `error.message leaks internals: ${e.message.slice(0, 120)}`;
  return details(e.details);
}

const str = (v: unknown) => typeof v === "string";
const num = (v: unknown) => typeof v === "number" && Number.isFinite(v);
const STATUS = ["PENDING", "SUCCESS", "EXPIRED", "FAILED"];

function all(...checks: (string | null | false)[]): string | null {
  for (const c of checks) if (c) return c;
  return null;
}
const need = (ok: boolean, what: string) => (ok ? null : what);

/** A decoded QR's `data`: the contract's eleven members (string or null), extra members only as strings. */
export function checkDecodedData(d: unknown): string | null {
  if (!isObj(d)) return "data is not an object";
  const contract = [
    "merchantType",
    "bankAccountID",
    "merchantID",
    "acquiringBank",
    "merchantCategoryCode",
    "transactionCurrency",
    "transactionAmount",
    "countryCode",
    "merchantName",
    "merchantCity",
    "crc",
  ];
  for (const k of contract) if (!(k in d) || (d[k] !== null && !str(d[k]))) return `data.${k} is not a string or null`;
  for (const [k, v] of Object.entries(d)) if (!contract.includes(k) && !str(v)) return `data.${k} is not a string`;
  return null;
}

export function checkDecodeResult(b: unknown): string | null {
  const k = keys(b, ["status", "data"]);
  if (k) return k;
  const s = (b as Obj).status as Obj;
  return all(
    keys(s, ["code", "errorCode", "message"]),
    need(num(s.code) && Number.isInteger(s.code), "status.code is not an integer"),
    s.code === 0
      ? need(s.errorCode === null && s.message === null, "code 0 with an errorCode/message")
      : need(
          Number.isInteger(s.errorCode) && (s.errorCode as number) > 0 && str(s.message),
          "non-zero code without a numeric errorCode and message",
        ),
    checkDecodedData((b as Obj).data),
  );
}

/**
 * 2xx bodies per REST path (the REST contract; the decision records in docs/decisions/ for the parts it leaves
 * open).
 */
export const RESPONSE_SHAPE: Record<string, (b: unknown) => string | null> = {
  "/qr/generate": (b) => {
    const o = b as Obj;
    return all(
      keys(b, ["transactionId", "expiredAt", "status", "requestData", "data", "clientToken", "checkoutUrl"]),
      need(
        str(o.transactionId) && ISO_UTC.test(String(o.expiredAt)) && o.status === "PENDING" && str(o.clientToken),
        "scalar members",
      ),
      keys(o.requestData, ["amount", "currency", "expiredAfter", "meta"]),
      need(
        num((o.requestData as Obj).amount) &&
          ((o.requestData as Obj).amount as number) > 0 &&
          [840, 116].includes((o.requestData as Obj).currency as number) &&
          isObj((o.requestData as Obj).meta),
        "requestData members",
      ),
      keys(o.data, ["qr", "md5"]),
      need(str((o.data as Obj).qr) && /^[0-9a-f]{32}$/.test(String((o.data as Obj).md5)), "data members"),
    );
  },
  "/qr/check": (b) => {
    const o = b as Obj;
    return all(
      keys(b, ["transactionId", "status", "data", "requestData", "expiredAt"]),
      need(
        str(o.transactionId) && STATUS.includes(String(o.status)) && ISO_UTC.test(String(o.expiredAt)),
        "scalar members",
      ),
      keys(o.data, ["qr", "md5"]),
      keys(o.requestData, ["meta", "amount", "currency", "expiredAfter"]),
    );
  },
  "/qr/verify": (b) => need(typeof b === "boolean", "not a bare boolean"),
  "/qr/decode": checkDecodeResult,
  "/gateway/generate-qr": (b) => {
    const o = b as Obj;
    return all(
      keys(b, [
        "transactionId",
        "orderId",
        "qrString",
        "qrImage",
        "deeplink",
        "appStore",
        "playStore",
        "amount",
        "currency",
        "status",
        "gatewayStatus",
        "expiresAt",
        "clientToken",
        "checkoutUrl",
      ]),
      need(
        str(o.transactionId) &&
          str(o.orderId) &&
          String(o.orderId).length <= 20 &&
          str(o.qrString) &&
          /^data:image\/png;base64,/.test(String(o.qrImage)),
        "identifiers and image",
      ),
      need(
        num(o.amount) &&
          ["USD", "KHR"].includes(String(o.currency)) &&
          o.status === "CHECKOUT" &&
          ISO_UTC.test(String(o.expiresAt)),
        "amount/currency/status/expiresAt",
      ),
      keys(o.gatewayStatus, ["code", "message"]),
    );
  },
  "/gateway/check-status": (b) => {
    const o = b as Obj;
    return all(
      keys(b, ["transactionId", "orderId", "status", "amount", "currency", "expiredAt", "createdAt"]),
      need(/^\d+\.\d{2}$/.test(String(o.amount)), "amount is not a string with two decimals"),
      need(
        ["CHECKOUT", "SUCCESS", "FAILED", "EXPIRED"].includes(String(o.status)) &&
          ISO_UTC.test(String(o.expiredAt)) &&
          ISO_UTC.test(String(o.createdAt)),
        "status/timestamps",
      ),
    );
  },
  "/gateway-link/generate-qr": (b) => {
    const o = b as Obj;
    return all(
      // deeplink: a PayWay link's answer carries the payer's banking-app link where the page gives one.
      keys(
        b,
        ["transactionId", "expiredAt", "status", "requestData", "data", "clientToken", "checkoutUrl"],
        ["deeplink"],
      ),
      need(o.status === "PENDING" && ISO_UTC.test(String(o.expiredAt)), "status/expiredAt"),
      keys(o.requestData, ["amount", "currency", "meta"]),
      keys(o.data, ["qr", "clientId"]),
    );
  },
  "/gateway-link/check": (b) => {
    const o = b as Obj;
    return all(
      keys(b, ["transactionId", "expiredAt", "status", "requestData", "data"], ["deeplink", "receiptUrl", "scanned"]),
      need(STATUS.includes(String(o.status)), "status"),
      keys(o.requestData, ["amount", "currency", "meta"]),
      keys(o.data, ["qr", "clientId"]),
    );
  },
};

/** A GraphQL response: `{data?, errors?}` where every error is `{message, locations?, path?, extensions: {code, details}}` with a documented code. */
export function checkGraphQLResponse(status: number, body: unknown): string | null {
  if (!isObj(body)) return `GraphQL body is not an object: ${String(body).slice(0, 80)}`;
  const k = keys(body, [], ["data", "errors", "extensions"]);
  if (k) return k;
  if (!("data" in body) && !("errors" in body)) return "neither data nor errors";
  if ("errors" in body) {
    if (!Array.isArray(body.errors) || body.errors.length === 0) return "errors is not a non-empty array";
    for (const e of body.errors) {
      const ek = keys(e, ["message", "extensions"], ["locations", "path"]);
      if (ek) return `error: ${ek}`;
      const x = (e as Obj).extensions as Obj;
      const code = String(x?.code);
      const xk = keys(x, ["code", "details"], ERROR_EXTRAS[code] ?? []);
      if (xk) return `error.extensions: ${xk} (${JSON.stringify(x).slice(0, 200)})`;
      if (!(code in ERROR_STATUS)) return `undocumented code ${code}`;
      if (code === "INTERNAL") return `INTERNAL error: ${(e as Obj).message}`;
      const d = details(x.details);
      if (d) return d;
      if (typeof (e as Obj).message !== "string") return "error.message is not a string";
    }
  }
  if (status >= 500) return `HTTP ${status}`;
  return null;
}
