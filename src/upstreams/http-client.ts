import { Agent, ProxyAgent, request, type Dispatcher } from "undici";
import { AppError } from "../errors.js";

/**
 * The one HTTP client of the upstreams (the national network's API, the card/QR gateway's API, a PayWay link's
 * status call): POST with a timeout, through the upstream's proxy if one is set, and one mapping of what goes wrong
 * on the way (no answer in time, no connection) to the service's upstream error, UPSTREAM_UNAVAILABLE naming the
 * upstream, the endpoint and the reason. The area clients keep only their protocol: paths, signing, body shapes,
 * and what an answer (any status) means; `fault` and `statusFault` give their own refusals the same shape.
 *
 * Transport: undici's `request` on a dispatcher of the client's own, a keep-alive pool (`connections`: a bound, as
 * the PayWay poller needs at hundreds of polls a second), or with a proxy URL (`http://[user:pass@]host:port`:
 * NETWORK_API_PROXY, GATEWAY_API_PROXY, LINK_PROXY) a ProxyAgent: always a CONNECT tunnel, for http: upstreams too
 * (undici 8 would forward those as plain proxy requests), the proxy's credentials as Proxy-Authorization.
 * Redirects are not followed: an upstream's 3xx is an answer like any other status.
 */

/** Why an upstream call gave no usable answer (`extra.reason` of the error). */
export type FaultReason =
  "TIMEOUT" | "CONNECTION" | "HTTP_STATUS" | "BAD_RESPONSE" | "UNAUTHORIZED" | "RATE_LIMITED" | "UPSTREAM_ERROR";

/** An answer, whatever its status. */
export interface UpstreamAnswer {
  status: number;
  text: string;
  /** The answer's headers, names in lower case (a 429's Retry-After is read from them). */
  headers?: Record<string, string | string[] | undefined>;
}

/** One exchange: the answer, or why there was none (the text after "<label> <path>: " in the error). */
export type Exchange =
  | ({ ok: true } & UpstreamAnswer)
  /** BAD_RESPONSE: an answer larger than `maxBytes`, refused unread. */
  | { ok: false; reason: "TIMEOUT" | "CONNECTION" | "BAD_RESPONSE"; what: string };

export interface UpstreamRequest {
  /** The endpoint: appended to the client's base URL, and named in faults. */
  path: string;
  body: string;
  /** Added to the defaults (content-type and accept application/json, the user agent), replacing any of the same name. */
  headers?: Record<string, string>;
  /** Where to send instead of baseUrl + path (an origin known per call, as a PayWay link's API). */
  url?: string;
  /** This call's timeout instead of the client's. */
  timeoutMs?: number;
}

/** How an upstream is named in its errors. */
export interface UpstreamName {
  /** `extra.upstream` of its errors: "network", "gateway", "payway". */
  upstream: string;
  /** The start of its error messages: "network API", "gateway API". */
  label: string;
}

export interface UpstreamFaults {
  /** UPSTREAM_UNAVAILABLE: "<label> <path>: <what>", with the upstream, the endpoint and the reason. */
  fault(path: string, what: string, reason: FaultReason, extra?: Record<string, unknown>): AppError;
  /** The fault of an answer whose status means no answer: "<label> <path>: HTTP <status>". */
  statusFault(path: string, status: number, extra?: Record<string, unknown>): AppError;
}

/** The errors of one upstream (its client's, and those its protocol code raises on reading an answer). */
export function upstreamFaults(name: UpstreamName): UpstreamFaults {
  const fault: UpstreamFaults["fault"] = (path, what, reason, extra = {}) =>
    new AppError("UPSTREAM_UNAVAILABLE", `${name.label} ${path}: ${what}`, [], {
      upstream: name.upstream,
      endpoint: path,
      reason,
      ...extra,
    });
  return {
    fault,
    statusFault: (path, status, extra = {}) =>
      fault(path, `HTTP ${status}`, "HTTP_STATUS", { httpStatus: status, ...extra }),
  };
}

export interface UpstreamClientOptions extends UpstreamName {
  baseUrl?: string;
  timeoutMs: number;
  /** The proxy URL, or null for direct connections. */
  proxy: string | null;
  /** Connections per origin (default: no bound). */
  connections?: number;
  /** How long an idle kept-alive connection is kept when the server gives no hint (undici's default: 4 s). */
  keepAliveTimeoutMs?: number;
  /**
   * HTTP/2 where the upstream offers it (undici 8's default); false: HTTP/1.1 only, as Node's own fetch speaks
   * (the network and the gateway APIs were always called that way).
   */
  http2?: boolean;
  /** The User-Agent header of every call (a call's own headers may replace it); none by default. */
  userAgent?: string;
  /** An answer's body larger than this is refused without being read further (default: no bound). */
  maxBytes?: number;
}

export interface UpstreamClient extends UpstreamFaults {
  /** One POST; never throws: timeouts and connection faults are an `ok: false` exchange. */
  exchange(req: UpstreamRequest): Promise<Exchange>;
  /** One POST: the answer whatever its status; a timeout or a connection fault throws UPSTREAM_UNAVAILABLE. */
  post(req: UpstreamRequest): Promise<UpstreamAnswer>;
  /** One POST of a JSON body with the JSON headers (and `headers` added). */
  postJson(path: string, body: unknown, headers?: Record<string, string>): Promise<UpstreamAnswer>;
  /** The proxy in use (credentials removed), or null. */
  proxy: string | null;
  close(): Promise<void>;
}

const JSON_HEADERS = { "content-type": "application/json", accept: "application/json" };

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const baseUrl = (options.baseUrl ?? "").replace(/\/+$/, "");
  const pool = {
    ...(options.connections === undefined ? {} : { connections: options.connections }),
    ...(options.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeout: options.keepAliveTimeoutMs }),
    ...(options.http2 === false ? { allowH2: false } : {}),
  };
  const dispatcher: Dispatcher =
    options.proxy === null ? new Agent(pool) : new ProxyAgent({ uri: options.proxy, proxyTunnel: true, ...pool });
  const faults = upstreamFaults(options);
  const defaults =
    options.userAgent === undefined ? JSON_HEADERS : { ...JSON_HEADERS, "user-agent": options.userAgent };

  async function exchange(req: UpstreamRequest): Promise<Exchange> {
    const timeoutMs = req.timeoutMs ?? options.timeoutMs;
    try {
      const res = await request(req.url ?? `${baseUrl}${req.path}`, {
        method: "POST",
        headers: { ...defaults, ...req.headers },
        body: req.body,
        dispatcher,
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (options.maxBytes === undefined)
        return { ok: true, status: res.statusCode, text: await res.body.text(), headers: res.headers };
      const text = await cappedText(res.body, options.maxBytes);
      if (text === null)
        return { ok: false, reason: "BAD_RESPONSE", what: `an answer larger than ${options.maxBytes} bytes (refused)` };
      return { ok: true, status: res.statusCode, text, headers: res.headers };
    } catch (err) {
      return transportFault(err, timeoutMs);
    }
  }

  async function post(req: UpstreamRequest): Promise<UpstreamAnswer> {
    const answer = await exchange(req);
    if (!answer.ok) throw faults.fault(req.path, answer.what, answer.reason);
    return { status: answer.status, text: answer.text, headers: answer.headers };
  }

  return {
    exchange,
    post,
    postJson: (path, body, headers) => post({ path, body: JSON.stringify(body), headers }),
    ...faults,
    proxy: options.proxy === null ? null : shownProxy(options.proxy),
    close: () => dispatcher.close(),
  };
}

/** The body as text, or null once it is past `maxBytes` (the rest is not read: the connection is dropped). */
async function cappedText(body: Dispatcher.ResponseData["body"], maxBytes: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    read += chunk.length;
    if (read > maxBytes) {
      body.destroy();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * What a failed exchange says: the timeout, or the connection's error code (ECONNREFUSED, ENOTFOUND, ...), else its
 * message. Duck-typed on purpose: errors may come from another realm under some runners, so instanceof fails.
 */
export function transportFault(err: unknown, timeoutMs: number): Exchange & { ok: false } {
  const name = property(err, "name");
  if (name === "TimeoutError" || name === "AbortError")
    return { ok: false, reason: "TIMEOUT", what: `no answer within ${timeoutMs} ms` };
  const cause = isRecord(err) ? err.cause : undefined;
  const code =
    property(err, "code") ?? property(cause, "code") ?? property(cause, "message") ?? property(err, "message");
  return { ok: false, reason: "CONNECTION", what: `cannot connect (${code ?? String(err)})` };
}

/** A proxy URL without its credentials, as logs and /readyz show it. */
export function shownProxy(proxyUrl: string): string {
  const shown = new URL(proxyUrl);
  shown.username = "";
  shown.password = "";
  return shown.origin;
}

function property(value: unknown, key: string): string | undefined {
  return isRecord(value) && typeof value[key] === "string" ? value[key] : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
