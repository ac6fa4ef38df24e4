import { AppError } from "../errors.js";

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
    }
  | { kind: "failed"; message: string }
  | { kind: "not_found" };

export interface NetworkClient {
  checkByMd5(md5: string): Promise<NetworkResult>;
  checkByMd5List(md5s: string[]): Promise<Map<string, NetworkResult>>;
}

export interface NetworkClientOptions {
  baseUrl: string;
  token: string;
  timeoutMs: number;
  /** md5s per upstream bulk call; the network accepts at most 50. */
  batchSize?: number;
}

/** The network's own limit for check_transaction_by_md5_list. */
export const MAX_BATCH_SIZE = 50;

const SINGLE_PATH = "/v1/check_transaction_by_md5";
const LIST_PATH = "/v1/check_transaction_by_md5_list";
const ERROR_NOT_FOUND = 1;
const ERROR_FAILED = 3;
const ERROR_UNAUTHORIZED = 6;
const MD5 = /^[0-9a-f]{32}$/i;

export function createNetworkClient(options: NetworkClientOptions): NetworkClient {
  const { token, timeoutMs, batchSize = MAX_BATCH_SIZE } = options;
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
    throw new AppError("INTERNAL", `network client: batchSize must be an integer from 1 to ${MAX_BATCH_SIZE}`);
  }

  async function call(path: string, body: unknown): Promise<Envelope> {
    return parseEnvelope(path, await post(`${baseUrl}${path}`, path, body, token, timeoutMs));
  }

  return {
    async checkByMd5(md5) {
      assertMd5s([md5]);
      const envelope = await call(SINGLE_PATH, { md5: md5.toLowerCase() });
      if (envelope.responseCode === 0) return paidFrom(SINGLE_PATH, envelope.data);
      return unsuccessful(SINGLE_PATH, envelope);
    },

    async checkByMd5List(md5s) {
      assertMd5s(md5s);
      const unique = [...new Set(md5s.map((m) => m.toLowerCase()))];
      const byMd5 = new Map<string, NetworkResult>();
      // Sequential on purpose: the monitor polls on a schedule, and one batch at a time keeps
      // our share of the network's rate limit small. The first faulty batch fails the call.
      for (let i = 0; i < unique.length; i += batchSize) {
        const batch = unique.slice(i, i + batchSize);
        const envelope = await call(LIST_PATH, batch);
        // Per-md5 outcomes travel inside `data`; a failed envelope is about the whole call.
        if (envelope.responseCode !== 0) {
          throw fault(LIST_PATH, `answered ${describeEnvelope(envelope)}`, "UPSTREAM_ERROR", envelopeExtra(envelope));
        }
        for (const [md5, result] of readListItems(envelope.data, batch)) byMd5.set(md5, result);
      }
      return new Map(md5s.map((m) => [m, byMd5.get(m.toLowerCase()) as NetworkResult]));
    },
  };
}

// --- HTTP ---------------------------------------------------------------------------------

interface RawAnswer {
  status: number;
  text: string;
}

async function post(url: string, path: string, body: unknown, token: string, timeoutMs: number): Promise<RawAnswer> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.status, text: await res.text() };
  } catch (err) {
    const name = property(err, "name");
    if (name === "TimeoutError" || name === "AbortError")
      throw fault(path, `no answer within ${timeoutMs} ms`, "TIMEOUT");
    const cause = isRecord(err) ? err.cause : undefined;
    throw fault(
      path,
      `cannot connect (${property(cause, "code") ?? property(cause, "message") ?? String(err)})`,
      "CONNECTION",
    );
  }
}

// --- Answers ------------------------------------------------------------------------------

interface Envelope {
  responseCode: 0 | 1;
  responseMessage: string;
  errorCode: number | null;
  data: unknown;
}

function parseEnvelope(path: string, answer: RawAnswer): Envelope {
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
  if (answer.status !== 200) throw fault(path, `HTTP ${answer.status}`, "HTTP_STATUS", { httpStatus: answer.status });
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
      // leaves the transaction pending until it expires (see docs/decisions-upstreams.md).
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
  const { hash, fromAccountId, toAccountId, currency, amount, acknowledgedDateMs, createdDateMs } = data;
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

// --- Errors -------------------------------------------------------------------------------

type FaultReason = "TIMEOUT" | "CONNECTION" | "HTTP_STATUS" | "BAD_RESPONSE" | "UNAUTHORIZED" | "UPSTREAM_ERROR";

function fault(path: string, what: string, reason: FaultReason, extra: Record<string, unknown> = {}): AppError {
  return new AppError("UPSTREAM_UNAVAILABLE", `network API ${path}: ${what}`, [], {
    upstream: "network",
    endpoint: path,
    reason,
    ...extra,
  });
}

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

/** Duck-typed on purpose: fetch's errors come from another realm under some runners, so instanceof fails. */
function property(value: unknown, key: string): string | undefined {
  return isRecord(value) && typeof value[key] === "string" ? value[key] : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
