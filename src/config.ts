import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import ipaddr from "ipaddr.js";
// Types only (erased): the packages themselves are loaded on first use, in production (estimateStrength).
import type * as ZxcvbnCore from "@zxcvbn-ts/core";
import type { ZxcvbnFactory, ZxcvbnResult } from "@zxcvbn-ts/core";
import type * as ZxcvbnCommon from "@zxcvbn-ts/language-common";
import type * as ZxcvbnEn from "@zxcvbn-ts/language-en";

/**
 * The shared settings: what every module may be given. Validated once at start; a bad value stops the process with
 * a message naming the variable. An area's own variables are read by the area (module.ts `settings`, through
 * EnvReader below, by the same rules and messages), so this file knows none of them.
 */
export interface Config {
  nodeEnv: "development" | "production" | "test";
  port: number;
  host: string;
  publicBaseUrl: string | null;
  databaseUrl: string | null;
  dataDir: string;
  adminToken: string | null;
  secretKey: string | null;
  simulators: boolean;
  demo: boolean;
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** `pretty`: one readable line per record (development); `json`: one JSON object per line. Requests: LOG_REQUESTS. */
  log: { format: "pretty" | "json"; requests: boolean };
  upstreamTimeoutMs: number;
  mongodbUrl: string | null;
  webhooks: { timeoutMs: number; retryForMs: number; disableAfterMs: number };
  /**
   * Where user-given URLs (webhook endpoints, payment-link pages) may lead. Strict (public unicast only)
   * unless EGRESS_ALLOW_PRIVATE_URLS is on, which it is by default outside production: demo mode delivers to
   * its own loopback receiver (/sim/webhooks) and drives its loopback link simulator.
   */
  egress: { permissive: boolean };
  rateLimit: { perMinute: number };
  /** Failed bearer tokens allowed per client address per window before 429 (BEARER_FAILURES_PER_MINUTE). */
  adminThrottle: { maxFailures: number; windowMs: number };
  /**
   * TRUSTED_PROXIES, as `address/bits` ranges: a request whose TCP peer is in one is attributed to the address the
   * proxy forwarded (src/auth/client-address.ts). Empty: every request is its TCP peer's.
   */
  trustedProxies: readonly string[];
  /**
   * The operator listener (ADMIN_PORT, ADMIN_HOST): admin API, dashboard and metrics, off the public port.
   * Null: everything on PORT, with /metrics behind a bearer token.
   */
  adminListener: { port: number; host: string } | null;
  /** Bearer token that may read /metrics on the public port (the admin token may too). */
  metricsToken: string | null;
  /**
   * Websocket (graphql-ws) limits: close codes in docs/decisions/0128-websocket-credentials-per-operation.md,
   * replays in docs/decisions/0136-replay-capped-and-budgeted.md, each setting in README "Configuration".
   */
  ws: {
    maxLifetimeMs: number;
    maxSocketsPerPrincipal: number;
    maxSocketsPerIp: number;
    maxSubscriptionsPerSocket: number;
    subscribesPerSecond: number;
    maxReplay: number;
    replayEventsPerMinute: number;
    keepaliveMs: number;
    idleTimeoutMs: number;
  };
  /** Per-operation cost budget, response-size cap and time budget of GraphQL operations. */
  graphql: { maxCost: number; maxResponseBytes: number; timeBudgetMs: number };
  /**
   * Connection caps and request timers of each HTTP listener:
   * docs/decisions/0142-connection-caps-and-request-timers.md.
   */
  http: HttpLimits;
  dbPoolSize: number;
}

export interface HttpLimits {
  /** Open TCP connections per listener; more are reset as they arrive (HTTP_MAX_CONNECTIONS). */
  maxConnections: number;
  /** Open TCP connections per client address (IPv6: per /64) per listener; 0 = no such cap. */
  maxConnectionsPerAddress: number;
  /** A request's headers must have arrived within this (a half-sent request is closed with 408). */
  headersTimeoutMs: number;
  /** A whole request (headers and body) must have arrived within this. */
  requestTimeoutMs: number;
  /** An idle kept-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /**
   * While answer bytes wait for a client, it must take minSendRate bytes a second over each window of this
   * length, or the connection is reset (docs/decisions/0174-slow-readers-bounded.md).
   */
  sendTimeoutMs: number;
  /** A connection the server closes is half-closed, and reset if the client has not closed its side within this. */
  lingerMs: number;
  /** Bytes a second a client must take while answer bytes wait for it (0: any progress at all). */
  minSendRate: number;
  /** A connection older than this takes no further request: the answer in progress ends it (0: no cap). */
  connectionMaxAgeMs: number;
  /** The process's open-files limit as read at start, or null when it could not be read. */
  openFilesLimit: number | null;
}

export class ConfigError extends Error {}

/**
 * The soft "Max open files" limit of this process from /proc/self/limits, or null (no /proc, unlimited,
 * unreadable). Node raises its soft limit to the hard one as it starts, so this is what the process really has.
 */
export function openFilesLimit(read: () => string = () => readFileSync("/proc/self/limits", "utf8")): number | null {
  let text: string;
  try {
    text = read();
  } catch {
    return null;
  }
  const soft = /^Max open files\s+(\d+)\s/m.exec(text)?.[1];
  return soft === undefined ? null : Number(soft);
}

/** Assumed when the open-files limit cannot be read: a common soft limit. */
const ASSUMED_OPEN_FILES = 4096;

/**
 * The default cap of each listener: 40 % of the descriptors, so the public port and the operator listener
 * together leave a fifth for the database, upstream calls, webhooks, Chromium's pipes and files.
 */
export function defaultMaxConnections(openFiles: number | null): number {
  return Math.min(50_000, Math.max(64, Math.floor((openFiles ?? ASSUMED_OPEN_FILES) * 0.4)));
}

function httpLimits(env: Env, openFiles: number | null): HttpLimits {
  const maxConnections = int(env, "HTTP_MAX_CONNECTIONS", defaultMaxConnections(openFiles), 1, 1_000_000);
  // One address may hold at most a quarter of the listener by default, so a few addresses cannot fill it.
  const perAddressDefault = Math.max(1, Math.min(1000, Math.floor(maxConnections / 4)));
  const headersTimeoutMs = int(env, "HTTP_HEADERS_TIMEOUT_MS", 10_000, 500, 600_000);
  const requestTimeoutMs = int(env, "HTTP_REQUEST_TIMEOUT_MS", 30_000, 500, 3600_000);
  // Node refuses a headers timeout longer than the request timeout when the server is created.
  if (headersTimeoutMs > requestTimeoutMs)
    throw new ConfigError(
      `HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  return {
    maxConnections,
    maxConnectionsPerAddress: int(env, "HTTP_MAX_CONNECTIONS_PER_ADDRESS", perAddressDefault, 0, 1_000_000),
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: int(env, "HTTP_KEEP_ALIVE_TIMEOUT_MS", 5000, 100, 600_000),
    sendTimeoutMs: int(env, "HTTP_SEND_TIMEOUT_MS", 10_000, 500, 600_000),
    minSendRate: int(env, "HTTP_MIN_SEND_RATE", 1024, 0, 1_000_000_000),
    lingerMs: int(env, "HTTP_LINGER_MS", 30_000, 100, 600_000),
    connectionMaxAgeMs: int(env, "HTTP_CONNECTION_MAX_AGE_MS", 120_000, 0, 86_400_000),
    openFilesLimit: openFiles,
  };
}

/**
 * The one rule for ADMIN_TOKEN (docs/decisions/0141-one-admin-token-rule.md): at least 32 characters in every
 * mode; in production also zxcvbn's strength estimate at its best score (4) and at least 10^38 guesses.
 * Random tokens of 32 bytes (43–44 characters of base64) score 41–44; everything composed by hand that was
 * tried scored at most 35.5.
 */
export const ADMIN_TOKEN_RULE = { minLength: 32, minScore: 4, minGuessesLog10: 38 } as const;

/** Why an admin token breaks the rule, or null. The strength estimate runs in production only. */
export function weakAdminToken(token: string, production: boolean): string | null {
  const { minLength, minScore, minGuessesLog10 } = ADMIN_TOKEN_RULE;
  if (token.length < minLength) return `it has ${token.length} characters, at least ${minLength} are required`;
  if (!production) return null;
  const estimate = estimateStrength(token);
  if (estimate.score >= minScore && estimate.guessesLog10 >= minGuessesLog10) return null;
  const why = estimate.feedback.warning?.replace(/\.$/, "");
  return (
    `its strength estimate is 10^${Math.floor(estimate.guessesLog10)} guesses, at least 10^${minGuessesLog10} ` +
    `are required${why ? `: ${why}` : ""}`
  );
}

let estimator: ZxcvbnFactory | null = null;

/**
 * zxcvbn with the common and English dictionaries, loaded on first use: only a production start pays for
 * them (docs/decisions/0141-one-admin-token-rule.md has the figures). The l33t matcher is capped at 10
 * substitutions: at its default (100) one check of a random 43-character token took 2.2 s instead of 0.3 s,
 * with the same estimates for every token measured.
 */
function estimateStrength(token: string): ZxcvbnResult {
  if (estimator === null) {
    const require = createRequire(import.meta.url);
    const core = require("@zxcvbn-ts/core") as typeof ZxcvbnCore;
    const common = require("@zxcvbn-ts/language-common") as typeof ZxcvbnCommon;
    const en = require("@zxcvbn-ts/language-en") as typeof ZxcvbnEn;
    estimator = new core.ZxcvbnFactory({
      dictionary: { ...common.dictionary, ...en.dictionary },
      graphs: common.adjacencyGraphs,
      translations: en.translations,
      l33tMaxSubstitutions: 10,
    });
  }
  return estimator.check(token);
}

/** The one advice every ADMIN_TOKEN refusal ends with: how to make a good token, and one to copy. */
function adminTokenAdvice(production: boolean): string {
  let token = randomBytes(32).toString("base64url");
  // The token offered must pass the rule itself; a random one fails about never, but then another is drawn.
  for (let i = 0; i < 3 && weakAdminToken(token, production) !== null; i++)
    token = randomBytes(32).toString("base64url");
  return (
    "use 32 random bytes (`openssl rand -base64 32`, or " +
    `\`node -e "console.log(require('node:crypto').randomBytes(32).toString('base64url'))"\`), e.g. ADMIN_TOKEN=${token}`
  );
}

type Env = Record<string, string | undefined>;

/** ADMIN_TOKEN under the one rule, or null (development: generated later); a ConfigError says why not. */
function checkedAdminToken(env: Env, production: boolean): string | null {
  try {
    const adminToken = str(env, "ADMIN_TOKEN");
    if (production && adminToken === null)
      throw new ConfigError(`ADMIN_TOKEN is required when NODE_ENV=production; ${adminTokenAdvice(production)}`);
    const weak = adminToken === null ? null : weakAdminToken(adminToken, production);
    if (weak !== null) throw new ConfigError(`ADMIN_TOKEN is too weak (${weak}); ${adminTokenAdvice(production)}`);
    return adminToken;
  } finally {
    // The estimator's ranked dictionaries (about 15 MB of heap) are not kept for the life of the process.
    estimator = null;
  }
}

function str(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v.trim() === "" ? null : v.trim();
}

function int(env: Env, name: string, dflt: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === null) return dflt;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function bool(env: Env, name: string, dflt: boolean): boolean {
  const raw = str(env, name);
  if (raw === null) return dflt;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = str(env, name);
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol))
    throw new ConfigError(`${name} must use ${protocols.join(" or ")}, got "${parsed.protocol}"`);
  return raw.replace(/\/+$/, "");
}

/** A comma-separated setting, its items trimmed, empty ones skipped, each read by `item` (which throws ConfigError). */
function commaList<T>(env: Env, name: string, item: (text: string) => T): T[] {
  const raw = str(env, name);
  if (raw === null) return [];
  return raw
    .split(",")
    .map((text) => text.trim())
    .filter((text) => text !== "")
    .map(item);
}

/** A comma-separated list of origins (`https://cdn.example.com`): scheme, host and port only, no path. */
function origins(env: Env, name: string): string[] {
  return commaList(env, name, (item) => {
    let parsed: URL;
    try {
      parsed = new URL(item);
    } catch {
      throw new ConfigError(`${name} must be a comma-separated list of origins, got "${item}"`);
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
      throw new ConfigError(`${name}: an origin must use https: or http:, got "${item}"`);
    if (parsed.origin !== item.replace(/\/$/, "") || parsed.username !== "" || parsed.password !== "")
      throw new ConfigError(
        `${name}: "${item}" is not an origin (scheme://host[:port], no path): use ${parsed.origin}`,
      );
    return parsed.origin;
  });
}

/** One origin (scheme://host[:port]). */
function origin(env: Env, name: string): string | null {
  const list = origins(env, name);
  if (list.length > 1) throw new ConfigError(`${name} must be one origin (scheme://host[:port]), not a list`);
  return list[0] ?? null;
}

const IPV4 = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * An address as a proxy or an operator writes it, strictly: dotted-quad IPv4 without leading zeros (ipaddr.js
 * alone would read `010.0.0.1` as octal and `127.1` as 127.0.0.1), or IPv6 without a zone; IPv4-mapped IPv6 is
 * read as the IPv4 address it carries. Null for anything else.
 */
export function strictAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (IPV4.test(text)) return ipaddr.IPv4.parse(text);
  if (!text.includes(":") || text.includes("%") || !ipaddr.IPv6.isValid(text)) return null;
  return ipaddr.process(text);
}

/** A range as trustedProxies holds it (`address/bits`). */
export function parseCidr(range: string): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  return ipaddr.parseCIDR(range);
}

/** A comma-separated list of addresses and CIDR ranges (`10.0.0.0/8, 2001:db8::/32, 172.30.0.2`), as ranges. */
function addressRanges(env: Env, name: string): string[] {
  return commaList(env, name, (item) => {
    const [text, bits, extra] = item.split("/");
    const address = strictAddress(text as string);
    const max = address?.kind() === "ipv4" ? 32 : 128;
    const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    // A mapped IPv4 range (::ffff:10.0.0.0/104) is read as IPv4 above; its prefix would not be: refused.
    const mappedRange = bits !== undefined && address?.kind() === "ipv4" && !IPV4.test(text as string);
    if (address === null || extra !== undefined || !(prefix <= max) || mappedRange)
      throw new ConfigError(
        `${name} must be a comma-separated list of IP addresses or CIDR ranges (10.0.0.0/8, fd00::/8), got "${item}"`,
      );
    return `${address.toString()}/${prefix}`;
  });
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], dflt: T): T {
  const raw = str(env, name);
  if (raw === null) return dflt;
  if (!(allowed as readonly string[]).includes(raw))
    throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, got "${raw}"`);
  return raw as T;
}

/**
 * A module's own settings, read from the environment by the rules above (module.ts `settings`): a bad value stops
 * the start with a ConfigError naming the variable, as loadConfig's own do. An area's settings live with the area.
 */
export class EnvReader {
  constructor(private readonly env: Env) {}

  /** The value, trimmed; null when unset or blank. */
  str(name: string): string | null {
    return str(this.env, name);
  }

  int(name: string, dflt: number, min: number, max: number): number {
    return int(this.env, name, dflt, min, max);
  }

  bool(name: string, dflt: boolean): boolean {
    return bool(this.env, name, dflt);
  }

  /** A URL of one of `protocols` (e.g. `["https:"]`), without a trailing slash; null when unset. */
  url(name: string, protocols: string[]): string | null {
    return url(this.env, name, protocols);
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], dflt: T): T {
    return oneOf(this.env, name, allowed, dflt);
  }

  /** A comma-separated list of origins (scheme://host[:port], no path); empty when unset. */
  origins(name: string): string[] {
    return origins(this.env, name);
  }

  /** One origin (scheme://host[:port]); null when unset. */
  origin(name: string): string | null {
    return origin(this.env, name);
  }

  /** A setting the module cannot start without. */
  required<T>(name: string, value: T | null): T {
    if (value === null) throw new ConfigError(`${name} is required`);
    return value;
  }

  /**
   * An upstream API's URL: with the simulators, null means the simulated upstream on this process's port; without
   * them there is nothing to fall back on, so it is required.
   */
  upstreamUrl(name: string, simulators: boolean): string | null {
    const value = this.url(name, ["http:", "https:"]);
    if (!simulators && value === null) throw new ConfigError(`${name} is required when SIMULATORS is off`);
    return value;
  }
}

export function loadConfig(env: Env = process.env, openFiles: number | null = openFilesLimit()): Config {
  const nodeEnv = oneOf(env, "NODE_ENV", ["development", "production", "test"] as const, "development");
  const production = nodeEnv === "production";
  const simulators = bool(env, "SIMULATORS", !production);
  if (production && simulators)
    throw new ConfigError(
      "SIMULATORS must be off when NODE_ENV=production (the /sim/* routes would let anyone mark payments paid)",
    );
  const adminToken = checkedAdminToken(env, production);
  const secretKey = str(env, "SECRET_KEY");
  if (secretKey !== null && secretKey.length < 32) throw new ConfigError("SECRET_KEY must be at least 32 characters");
  if (production && secretKey === null) throw new ConfigError("SECRET_KEY is required when NODE_ENV=production");
  if (production && str(env, "DATABASE_URL") === null && !bool(env, "EMBEDDED_IN_PRODUCTION", false))
    throw new ConfigError(
      "DATABASE_URL is required when NODE_ENV=production (the embedded database is one process's, on this disk); " +
        "set EMBEDDED_IN_PRODUCTION=1 to run on it anyway",
    );
  if (str(env, "MONGODB_URL") !== null) {
    // The Agenda MongoDB backend is not bundled (no MongoDB server to test it on); jobs use PostgreSQL.
    throw new ConfigError("MONGODB_URL is set, but this build runs its jobs on PostgreSQL only; unset MONGODB_URL");
  }
  return {
    nodeEnv,
    port: int(env, "PORT", 4000, 0, 65535),
    // Demo mode's /sim/* controls are unauthenticated: it listens on loopback unless HOST says otherwise.
    host: str(env, "HOST") ?? (bool(env, "DEMO", simulators) ? "127.0.0.1" : "0.0.0.0"),
    publicBaseUrl: url(env, "PUBLIC_BASE_URL", ["http:", "https:"]),
    databaseUrl: url(env, "DATABASE_URL", ["postgres:", "postgresql:"]),
    dataDir: str(env, "DATA_DIR") ?? "./data",
    adminToken,
    secretKey,
    simulators,
    demo: bool(env, "DEMO", simulators),
    logLevel: oneOf(env, "LOG_LEVEL", ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const, "info"),
    log: {
      format: oneOf(env, "LOG_FORMAT", ["pretty", "json"] as const, nodeEnv === "development" ? "pretty" : "json"),
      requests: bool(env, "LOG_REQUESTS", false),
    },
    upstreamTimeoutMs: int(env, "UPSTREAM_TIMEOUT_MS", 10000, 100, 120000),
    mongodbUrl: url(env, "MONGODB_URL", ["mongodb:", "mongodb+srv:"]),
    webhooks: {
      timeoutMs: int(env, "WEBHOOK_TIMEOUT_MS", 10000, 100, 60000),
      retryForMs: int(env, "WEBHOOK_RETRY_FOR_MS", 24 * 3600_000, 1000, 30 * 24 * 3600_000),
      disableAfterMs: int(env, "WEBHOOK_DISABLE_AFTER_MS", 3 * 24 * 3600_000, 1000, 30 * 24 * 3600_000),
    },
    // WEBHOOK_ALLOW_PRIVATE_URLS is the setting's earlier name, still read when the new one is unset.
    egress: {
      permissive: bool(env, "EGRESS_ALLOW_PRIVATE_URLS", bool(env, "WEBHOOK_ALLOW_PRIVATE_URLS", !production)),
    },
    rateLimit: { perMinute: int(env, "RATE_LIMIT_PER_MINUTE", 6000, 0, 1_000_000) },
    adminListener:
      str(env, "ADMIN_PORT") === null
        ? null
        : { port: int(env, "ADMIN_PORT", 0, 0, 65535), host: str(env, "ADMIN_HOST") ?? "127.0.0.1" },
    metricsToken: str(env, "METRICS_TOKEN"),
    adminThrottle: { maxFailures: int(env, "BEARER_FAILURES_PER_MINUTE", 10, 1, 100_000), windowMs: 60_000 },
    trustedProxies: addressRanges(env, "TRUSTED_PROXIES"),
    ws: {
      maxLifetimeMs: int(env, "WS_MAX_LIFETIME_MS", 3600_000, 1000, 7 * 24 * 3600_000),
      maxSocketsPerPrincipal: int(env, "WS_MAX_SOCKETS_PER_PRINCIPAL", 200, 1, 1_000_000),
      maxSocketsPerIp: int(env, "WS_MAX_SOCKETS_PER_IP", 1000, 1, 1_000_000),
      maxSubscriptionsPerSocket: int(env, "WS_MAX_SUBSCRIPTIONS_PER_SOCKET", 100, 1, 100_000),
      subscribesPerSecond: int(env, "WS_SUBSCRIBES_PER_SECOND", 20, 1, 100_000),
      maxReplay: int(env, "WS_MAX_REPLAY", 1000, 1, 100_000),
      replayEventsPerMinute: int(env, "WS_REPLAY_EVENTS_PER_MINUTE", 6000, 0, 10_000_000),
      keepaliveMs: int(env, "WS_KEEPALIVE_MS", 30_000, 1000, 600_000),
      idleTimeoutMs: int(env, "WS_IDLE_TIMEOUT_MS", 90_000, 1000, 3600_000),
    },
    graphql: {
      maxCost: int(env, "GRAPHQL_MAX_COST", 5000, 10, 10_000_000),
      maxResponseBytes: int(env, "GRAPHQL_MAX_RESPONSE_BYTES", 2 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      timeBudgetMs: int(env, "GRAPHQL_TIME_BUDGET_MS", 10_000, 100, 600_000),
    },
    http: httpLimits(env, openFiles),
    dbPoolSize: int(env, "DB_POOL_SIZE", 10, 1, 100),
  };
}
