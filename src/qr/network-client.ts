import { AppError } from "../errors.js";
import {
  createUpstreamClient,
  upstreamFaults,
  type UpstreamAnswer,
  type UpstreamClient,
  type UpstreamName,
} from "../upstreams/http-client.js";
import {
  ERROR_UNAUTHORIZED,
  MAX_BATCH_SIZE,
  pacer,
  refusalWatch,
  retryAfterMs,
  headerOf,
  tokenWatch,
  unauthorized,
  type RateLimitPause,
  type Refusal,
  type TokenRefusal,
} from "./network-limits.js";

export type { RateLimitPause, Refusal, TokenRefusal } from "./network-limits.js";

/**
 * Client of the national payment network's open API: "was the QR with this md5 paid?".
 * Only two answers change a transaction (paid, failed); "not found" is the normal answer until
 * someone pays. Everything else — HTTP errors, timeouts, a rejected token, an answer we cannot
 * read — is an upstream fault the caller backs off from, never "not paid".
 */

export type NetworkResult =
  | {
      kind: "paid";
      hash: string;
      fromAccountId: string;
      toAccountId: string;
      amount: string;
      currency: string;
      acknowledgedDateMs: number | null;
      createdDateMs: number | null;
      /** The paying bank's own reference of the transfer, when the network gives one (reconciliation). */
      externalRef: string | null;
    }
  | { kind: "failed"; message: string }
  | { kind: "not_found" }
  /**
   * Only from the list call in single mode: this md5's own check failed (the others may have answered); `reason` is
   * the fault's (UNAUTHORIZED, RATE_LIMITED, TIMEOUT, …).
   */
  | { kind: "fault"; message: string; reason?: string };

/**
 * How the list call checks: `list` (one md5-list call per batch) or `single` (one single-md5 call per md5,
 * after the list endpoint answered 403/404 — seen in production with a valid token).
 */
export type CheckMode = "list" | "single";

export interface NetworkClient {
  /**
   * generate_deeplink_by_qr: the short link, or null when the network declined (it answers HTTP 200 with a
   * non-zero responseCode, e.g. errorCode 4 deeplink provider error or 5 missing fields). HTTP faults throw.
   */
  generateDeeplink(
    qr: string,
    source: { appName: string; appIconUrl: string; appDeepLinkCallback: string },
  ): Promise<string | null>;
  checkByMd5(md5: string): Promise<NetworkResult>;
  checkByMd5List(md5s: string[]): Promise<Map<string, NetworkResult>>;
  mode(): CheckMode;
  /**
   * The network's renew_token call: POST /v1/renew_token {email} (no bearer token). The new token, or null when
   * the network answered without one (its renewal is known to be unreliable); HTTP faults throw.
   */
  renewToken(email: string): Promise<string | null>;
  /** The proxy in use (credentials removed), or null. */
  proxy: string | null;
  close(): Promise<void>;
}

export interface NetworkClientOptions {
  baseUrl: string;
  /** The bearer token, or where to read the one in use at each call (qr/network-token.ts). */
  token: string | (() => string);
  /**
   * A call answered 401 with the token `used`: resolves true when another token is available, and the call
   * is then made once more (never more: a second 401 is the answer).
   */
  onUnauthorized?: (used: string) => Promise<boolean>;
  timeoutMs: number;
  /** md5s per upstream bulk call; the network accepts at most 50. */
  batchSize?: number;
  /** In single mode, how often the list endpoint is tried again (default 10 min). */
  listReprobeMs?: number;
  /** In single mode, single calls in flight at once (default 4). */
  singleConcurrency?: number;
  /** Single-md5 calls started per second at most, with jitter (NETWORK_SINGLE_RATE, default 10). */
  singleRate?: number;
  /** Milliseconds now (the service's clock). */
  now?: () => number;
  /** Told of every change of mode, with the reason. */
  onMode?: (mode: CheckMode, reason: string) => void;
  /** NETWORK_API_PROXY: every call (renew_token too) goes through this proxy; direct by default. */
  proxy?: string | null;
  /**
   * Told when every call is refused with 403 (the last REFUSED_RUN calls, the single-md5 endpoint among them:
   * not only the list endpoint), with what was refused; and told `null` when a call is answered again.
   */
  onRefused?: (refused: Refusal | null) => void;
  /** Told once when the network starts refusing the token (401 / errorCode 6), and `null` once when it ends. */
  onTokenRefused?: (refused: TokenRefusal | null) => void;
  /** Told when a call answers 429: no call is made until the pause is over (they fail at once, RATE_LIMITED). */
  onRateLimited?: (pause: RateLimitPause) => void;
}

export { MAX_BATCH_SIZE } from "./network-limits.js";

const SINGLE_PATH = "/v1/check_transaction_by_md5";
const LIST_PATH = "/v1/check_transaction_by_md5_list";
const DEEPLINK_PATH = "/v1/generate_deeplink_by_qr";
const ERROR_NOT_FOUND = 1;
const ERROR_FAILED = 3;
const MD5 = /^[0-9a-f]{32}$/i;

const NETWORK: UpstreamName = { upstream: "network", label: "network API" };
const { fault, statusFault } = upstreamFaults(NETWORK);

export function createNetworkClient(options: NetworkClientOptions): NetworkClient {
  const { batchSize = MAX_BATCH_SIZE, listReprobeMs = 600_000, singleConcurrency = 4, singleRate = 10 } = options;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
    throw new AppError("INTERNAL", `network client: batchSize must be an integer from 1 to ${MAX_BATCH_SIZE}`);
  }
  const now = options.now ?? Date.now;
  const http = networkHttp(options);
  const refusals = refusalWatch(options.onRefused, now, SINGLE_PATH);
  const tokens = tokenWatch(options.onTokenRefused, now);
  const send = sender(http, options, now, (path, answer) => (refusals(path, answer), tokens(path, answer)));
  const pace = pacer(singleRate);
  let mode: CheckMode = "list";
  let listRefusedAt = 0;

  async function checkOne(md5: string): Promise<NetworkResult> {
    assertMd5s([md5]);
    // During a 429 pause nothing is called: fail at once rather than after waiting a pacing slot first.
    send.notPaused(SINGLE_PATH);
    await pace();
    const envelope = parseEnvelope(SINGLE_PATH, await send(SINGLE_PATH, { md5: md5.toLowerCase() }));
    if (envelope.responseCode === 0) return paidFrom(SINGLE_PATH, envelope.data);
    return unsuccessful(SINGLE_PATH, envelope);
  }

  function setMode(next: CheckMode, reason: string): void {
    if (mode === next) return;
    mode = next;
    options.onMode?.(next, reason);
  }

  /** One batch with the list call; false when the list endpoint refused it (403/404: single mode from now on). */
  async function checkListed(batch: string[], into: Map<string, NetworkResult>): Promise<boolean> {
    const answer = await send(LIST_PATH, batch);
    if (answer.status === 403 || answer.status === 404) {
      listRefusedAt = now();
      setMode("single", `${LIST_PATH} answered HTTP ${answer.status}; checking each md5 with ${SINGLE_PATH}`);
      return false;
    }
    const envelope = parseEnvelope(LIST_PATH, answer);
    // Per-md5 outcomes travel inside `data`; a failed envelope is about the whole call.
    if (envelope.responseCode !== 0) {
      const extra = envelopeExtra(envelope);
      throw fault(LIST_PATH, `answered ${describeEnvelope(envelope)}`, "UPSTREAM_ERROR", extra);
    }
    const items = readListItems(envelope.data, batch);
    setMode("list", `${LIST_PATH} answers again`);
    for (const [md5, result] of items) into.set(md5, result);
    return true;
  }

  return {
    checkByMd5: checkOne,
    mode: () => mode,
    proxy: http.proxy,
    close: () => http.close(),

    async generateDeeplink(qr, source) {
      const envelope = parseEnvelope(DEEPLINK_PATH, await send(DEEPLINK_PATH, { qr, sourceInfo: source }));
      const data = envelope.data;
      const link = isRecord(data) && typeof data.shortLink === "string" ? data.shortLink : null;
      return envelope.responseCode === 0 && link !== null && /^https?:\/\/\S+$/.test(link) ? link : null;
    },

    async checkByMd5List(md5s) {
      assertMd5s(md5s);
      const unique = [...new Set(md5s.map((m) => m.toLowerCase()))];
      const byMd5 = new Map<string, NetworkResult>();
      // Sequential on purpose: the monitor polls on a schedule, and one batch at a time keeps
      // our share of the network's rate limit small. The first faulty batch fails the call.
      for (let i = 0; i < unique.length; i += batchSize) {
        const batch = unique.slice(i, i + batchSize);
        // In single mode the list endpoint is tried again once `listReprobeMs` has passed.
        const listed = (mode === "list" || now() - listRefusedAt >= listReprobeMs) && (await checkListed(batch, byMd5));
        if (!listed) await checkSingly(batch, byMd5, checkOne, singleConcurrency);
      }
      return new Map(md5s.map((m) => [m, byMd5.get(m.toLowerCase()) as NetworkResult]));
    },

    renewToken: (email) => renewToken(http, email),
  };
}

/** The network API's HTTP client. */
function networkHttp(options: NetworkClientOptions): UpstreamClient {
  return createUpstreamClient({
    ...NETWORK,
    baseUrl: options.baseUrl,
    timeoutMs: options.timeoutMs,
    proxy: options.proxy ?? null,
    // As Node's fetch called it before this client: HTTP/1.1, User-Agent "node" (some firewalls refuse calls without one).
    http2: false,
    userAgent: "node",
  });
}

/** renew_token: POST /v1/renew_token {email}, without a bearer token (not counted as a refused call either). */
async function renewToken(http: UpstreamClient, email: string): Promise<string | null> {
  const path = "/v1/renew_token";
  const answer = await http.postJson(path, { email });
  if (answer.status !== 200) throw http.statusFault(path, answer.status);
  const envelope = parseEnvelope(path, answer);
  const data = envelope.data;
  const fresh = isRecord(data) && typeof data.token === "string" ? data.token : null;
  return envelope.responseCode === 0 && fresh !== null && fresh.length > 0 ? fresh : null;
}

/** Single checks of a batch, `concurrency` at a time; one md5's fault is that md5's alone. */
async function checkSingly(
  batch: string[],
  into: Map<string, NetworkResult>,
  checkOne: (md5: string) => Promise<NetworkResult>,
  concurrency: number,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < batch.length) {
      const md5 = batch[next++];
      into.set(
        md5,
        await checkOne(md5).catch((err: unknown): NetworkResult => {
          const reason = err instanceof AppError ? err.extra.reason : undefined;
          return { kind: "fault", message: String(err), ...(typeof reason === "string" ? { reason } : {}) };
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, batch.length) }, worker));
}

/**
 * A call with the bearer token in use; answered 401 (or errorCode 6), and another token available, once more with
 * that one. Every answer is observed (refusals of the token, of every call). A 429 pauses every call until its
 * Retry-After has passed (the service's clock): the 429 and the calls during the pause fail with RATE_LIMITED.
 */
function sender(
  http: UpstreamClient,
  options: Pick<NetworkClientOptions, "token" | "onUnauthorized" | "onRateLimited">,
  now: () => number,
  observe: (path: string, answer: UpstreamAnswer) => void,
): Sender {
  const token = typeof options.token === "string" ? () => options.token as string : options.token;
  const post = (path: string, body: unknown, bearer: string) =>
    http.postJson(path, body, { authorization: `Bearer ${bearer}` });
  let pausedUntil = 0;
  const notPaused = (path: string) => {
    if (now() < pausedUntil) {
      const until = new Date(pausedUntil).toISOString();
      throw fault(path, `not called: the network answered HTTP 429, calls wait until ${until}`, "RATE_LIMITED");
    }
  };
  const send = async (path: string, body: unknown): Promise<UpstreamAnswer> => {
    notPaused(path);
    const used = token();
    let answer = await post(path, body, used);
    if (unauthorized(answer) && options.onUnauthorized !== undefined && (await options.onUnauthorized(used)))
      answer = await post(path, body, token());
    observe(path, answer);
    if (answer.status === 429) {
      const waitMs = retryAfterMs(answer, now());
      pausedUntil = now() + waitMs;
      const until = new Date(pausedUntil).toISOString();
      options.onRateLimited?.({ until, waitMs, retryAfter: headerOf(answer, "retry-after"), endpoint: path });
      throw fault(path, `HTTP 429 (too many requests): calls wait until ${until}`, "RATE_LIMITED", {
        httpStatus: 429,
        retryAfterMs: waitMs,
      });
    }
    return answer;
  };
  return Object.assign(send, { notPaused });
}

/** A call to the network, and the check that no call is made during a 429 pause. */
type Sender = ((path: string, body: unknown) => Promise<UpstreamAnswer>) & { notPaused(path: string): void };

// --- Answers ------------------------------------------------------------------------------

interface Envelope {
  responseCode: 0 | 1;
  responseMessage: string;
  errorCode: number | null;
  data: unknown;
}

function parseEnvelope(path: string, answer: UpstreamAnswer): Envelope {
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    body = undefined;
  }
  const envelope = isEnvelope(body) ? body : null;
  if (answer.status === 401 || envelope?.errorCode === ERROR_UNAUTHORIZED) {
    throw fault(
      path,
      "the network rejected our token (unauthorized, errorCode 6): renew the token; payment state is unknown, not unpaid",
      "UNAUTHORIZED",
      { httpStatus: answer.status },
    );
  }
  if (answer.status !== 200) throw statusFault(path, answer.status);
  if (!envelope) throw fault(path, "the answer is not the network's JSON envelope", "BAD_RESPONSE");
  return envelope;
}

function isEnvelope(value: unknown): value is Envelope {
  if (!isRecord(value)) return false;
  const { responseCode, responseMessage, errorCode } = value;
  return (
    (responseCode === 0 || responseCode === 1) &&
    (responseMessage === undefined || responseMessage === null || typeof responseMessage === "string") &&
    (errorCode === null || errorCode === undefined || Number.isInteger(errorCode)) &&
    "data" in value
  );
}

/** responseCode 1 of the single check: only "not found" (1) and "failed" (3) are answers. */
function unsuccessful(path: string, envelope: Envelope): NetworkResult {
  if (envelope.responseCode === 1 && envelope.errorCode === ERROR_NOT_FOUND) return { kind: "not_found" };
  if (envelope.responseCode === 1 && envelope.errorCode === ERROR_FAILED) {
    return { kind: "failed", message: envelope.responseMessage || "Transaction failed." };
  }
  throw fault(path, `answered ${describeEnvelope(envelope)}`, "UPSTREAM_ERROR", envelopeExtra(envelope));
}

/**
 * Bulk items: {md5, status, message, data}. Public clients disagree on where the transaction of a
 * SUCCESS item sits (`data`, `transaction`, or inline), so all three are read.
 */
function readListItems(data: unknown, asked: string[]): Map<string, NetworkResult> {
  if (!Array.isArray(data)) throw fault(LIST_PATH, "`data` is not an array", "BAD_RESPONSE");
  const results = new Map<string, NetworkResult>();
  for (const item of data) {
    if (!isRecord(item) || typeof item.md5 !== "string" || typeof item.status !== "string") {
      throw fault(LIST_PATH, "an item lacks md5/status", "BAD_RESPONSE");
    }
    const md5 = item.md5.toLowerCase();
    const message = typeof item.message === "string" ? item.message : "";
    switch (item.status) {
      case "SUCCESS":
        results.set(
          md5,
          paidFrom(LIST_PATH, item.data ?? item.transaction ?? (typeof item.hash === "string" ? item : undefined)),
        );
        break;
      // A static QR cannot be followed by md5; we only issue dynamic ones, so such an answer
      // leaves the transaction pending until it expires (see docs/decisions/0035-network-md5-client.md).
      case "NOT_FOUND":
      case "STATIC_QR":
        results.set(md5, { kind: "not_found" });
        break;
      case "FAILED":
        results.set(md5, { kind: "failed", message: message || "Transaction failed." });
        break;
      default:
        throw fault(LIST_PATH, `unknown item status ${JSON.stringify(item.status)}`, "BAD_RESPONSE");
    }
  }
  const missing = asked.filter((md5) => !results.has(md5));
  if (missing.length > 0) {
    throw fault(LIST_PATH, `the answer lacks ${missing.length} of the ${asked.length} md5s asked for`, "BAD_RESPONSE");
  }
  return results;
}

function paidFrom(path: string, data: unknown): NetworkResult {
  if (!isRecord(data)) throw fault(path, "a successful answer without transaction data", "BAD_RESPONSE");
  const { hash, fromAccountId, toAccountId, currency, amount, acknowledgedDateMs, createdDateMs, externalRef } = data;
  const text = [hash, fromAccountId, toAccountId, currency];
  if (!text.every((v) => typeof v === "string" && v.length > 0)) {
    throw fault(path, "transaction data lacks hash/fromAccountId/toAccountId/currency", "BAD_RESPONSE");
  }
  const decimal = amountText(amount);
  const acknowledged = optionalMs(acknowledgedDateMs);
  const created = optionalMs(createdDateMs);
  if (decimal === null || acknowledged === undefined || created === undefined) {
    throw fault(path, "transaction data has an unreadable amount or date", "BAD_RESPONSE");
  }
  return {
    kind: "paid",
    hash: hash as string,
    fromAccountId: fromAccountId as string,
    toAccountId: toAccountId as string,
    currency: currency as string,
    amount: decimal,
    acknowledgedDateMs: acknowledged,
    createdDateMs: created,
    externalRef: typeof externalRef === "string" && externalRef !== "" ? externalRef.slice(0, 200) : null,
  };
}

/** The network sends amounts as JSON numbers; we keep their shortest decimal text. */
function amountText(value: unknown): string | null {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) {
    const text = String(value);
    return /e/i.test(text) ? null : text;
  }
  if (typeof value === "string" && /^\d+(\.\d+)?$/.test(value)) return value;
  return null;
}

/** A date in ms, null when absent; undefined means unreadable. */
function optionalMs(value: unknown): number | null | undefined {
  if (value === null || value === undefined) return null;
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : undefined;
}

// --- Errors ---------------------------------------------------------------------------------

function describeEnvelope(envelope: Envelope): string {
  return `responseCode ${envelope.responseCode}, errorCode ${envelope.errorCode ?? "null"} (${envelope.responseMessage || "no message"})`;
}

function envelopeExtra(envelope: Envelope): Record<string, unknown> {
  return { errorCode: envelope.errorCode, responseMessage: envelope.responseMessage };
}

function assertMd5s(md5s: string[]): void {
  const details = md5s.flatMap((md5, i) =>
    typeof md5 === "string" && MD5.test(md5)
      ? []
      : [{ field: md5s.length === 1 ? "md5" : `md5s[${i}]`, message: "must be 32 hexadecimal characters" }],
  );
  if (details.length > 0) throw new AppError("BAD_USER_INPUT", "invalid md5", details);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
