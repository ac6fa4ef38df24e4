import { randomBytes } from "node:crypto";

/**
 * The one place that reads the environment (STYLE.md §10). Validated once at start; a bad value stops
 * the process with a message naming the variable.
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
  network: {
    baseUrl: string | null;
    token: string;
    batchSize: number;
    monitorIntervalMs: number;
    /** Outbound proxy of the network API calls (standard URL), or null. */
    proxy: string | null;
    /** The e-mail registered with the network: with it the token is renewed automatically (renew_token). */
    email: string | null;
    /** After the md5-list endpoint refused (403/404): how often it is tried again, and single calls in flight. */
    listReprobeMs: number;
    singleConcurrency: number;
    /** Generic QR: how long past expiry a transaction waits for a check that answers (then expires anyway). */
    expiryGraceMs: number;
    /** Generic QR: how long after expiry a late payment is still looked for (0: never). */
    lateWatchMs: number;
    /** Generic QR: how often an expired transaction is checked during the late watch. */
    lateCheckIntervalMs: number;
  };
  gateway: {
    baseUrl: string | null;
    monitorIntervalMs: number;
    proxy: string | null;
    /** Send the per-configuration pushback URL as callback_url (it must be whitelisted at the gateway). */
    pushback: boolean;
  };
  link: {
    chromiumPath: string;
    maxMonitors: number;
    openTimeoutMs: number;
    /** The default adapter of a link configuration that names none (gateway-link/link-protocol.ts). */
    pageProtocol: "simulated" | "payway";
    /**
     * Origin of a PayWay link page's API (PAYWAY_API_ORIGIN); null: the built-in twin's (simulators on), which is
     * only known once it listens.
     */
    paywayApiOrigin: string | null;
    /** Proxy for Chromium and the status poller of payment-link pages (LINK_PROXY), or null. */
    proxy: string | null;
    /** How long after EXPIRED a page followed without a browser is still polled for a late approval (0: never). */
    lateWatchMs: number;
    /** Payments followed without a browser, per worker (LINK_MAX_POLLS). */
    maxPolls: number;
    /** Origins a payment-link page may load from besides its own, and receipts may be on (LINK_ALLOWED_ORIGINS). */
    allowedOrigins: string[];
    /** CHROMIUM_SANDBOX: auto (the sandbox where this machine allows it), on, off. */
    sandbox: "auto" | "on" | "off";
  };
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
   * The operator listener (ADMIN_PORT, ADMIN_HOST): admin API, dashboard and metrics, off the public port.
   * Null: everything on PORT, with /metrics behind a bearer token.
   */
  adminListener: { port: number; host: string } | null;
  /** Bearer token that may read /metrics on the public port (the admin token may too). */
  metricsToken: string | null;
  /** Websocket (graphql-ws) limits: docs/decisions.md "Live surfaces under hostile clients". */
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
  dbPoolSize: number;
}

export class ConfigError extends Error {}

/**
 * Why a production admin token is too weak, or null (issue 16): at least 32 characters, at least 10
 * distinct ones, and at least 128 bits by the string's own character statistics (Shannon entropy × length),
 * and at least three quarters of its 4-character pieces distinct, so `aaaa…`, `password12345678`
 * repeated or a counting pattern are refused.
 */
export function weakAdminToken(token: string): string | null {
  if (token.length < 32) return `it has ${token.length} characters, at least 32 are required`;
  const counts = new Map<string, number>();
  for (const ch of token) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  if (counts.size < 10) return `it uses only ${counts.size} distinct characters, at least 10 are required`;
  let bitsPerChar = 0;
  for (const n of counts.values()) bitsPerChar -= (n / token.length) * Math.log2(n / token.length);
  const grams = new Set<string>();
  for (let i = 0; i + 4 <= token.length; i++) grams.add(token.slice(i, i + 4));
  // A repeated or patterned string repeats its 4-character pieces; a random one almost never does.
  if (bitsPerChar * token.length < 128 || grams.size < 0.75 * (token.length - 3))
    return "it is too repetitive to be random";
  return null;
}

type Env = Record<string, string | undefined>;

/** A token to copy into the environment: 256 random bits, base64url (43 characters). */
function generatedToken(): string {
  return randomBytes(32).toString("base64url");
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

/** A comma-separated list of origins (`https://cdn.example.com`): scheme, host and port only, no path. */
function origins(env: Env, name: string): string[] {
  const raw = str(env, name);
  if (raw === null) return [];
  return raw
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "")
    .map((item) => {
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

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], dflt: T): T {
  const raw = str(env, name);
  if (raw === null) return dflt;
  if (!(allowed as readonly string[]).includes(raw))
    throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, got "${raw}"`);
  return raw as T;
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = oneOf(env, "NODE_ENV", ["development", "production", "test"] as const, "development");
  const production = nodeEnv === "production";
  const networkUrl = url(env, "NETWORK_API_URL", ["http:", "https:"]);
  const gatewayUrl = url(env, "GATEWAY_API_URL", ["http:", "https:"]);
  const simulators = bool(env, "SIMULATORS", !production);
  if (production && simulators)
    throw new ConfigError(
      "SIMULATORS must be off when NODE_ENV=production (the /sim/* routes would let anyone mark payments paid)",
    );
  const adminToken = str(env, "ADMIN_TOKEN");
  if (adminToken !== null && adminToken.length < 16)
    throw new ConfigError("ADMIN_TOKEN must be at least 16 characters");
  if (production && adminToken === null)
    throw new ConfigError(
      `ADMIN_TOKEN is required when NODE_ENV=production; for example ADMIN_TOKEN=${generatedToken()}`,
    );
  const weak = production && adminToken !== null ? weakAdminToken(adminToken) : null;
  if (weak !== null)
    throw new ConfigError(
      `ADMIN_TOKEN is too weak for production (${weak}); use a random one, e.g. ADMIN_TOKEN=${generatedToken()}`,
    );
  const secretKey = str(env, "SECRET_KEY");
  if (secretKey !== null && secretKey.length < 32) throw new ConfigError("SECRET_KEY must be at least 32 characters");
  if (production && secretKey === null) throw new ConfigError("SECRET_KEY is required when NODE_ENV=production");
  if (str(env, "MONGODB_URL") !== null) {
    // The Agenda MongoDB backend is not bundled (no MongoDB server to test it on); jobs use PostgreSQL.
    throw new ConfigError("MONGODB_URL is set, but this build runs its jobs on PostgreSQL only; unset MONGODB_URL");
  }
  if (!simulators && networkUrl === null) throw new ConfigError("NETWORK_API_URL is required when SIMULATORS is off");
  if (!simulators && gatewayUrl === null) throw new ConfigError("GATEWAY_API_URL is required when SIMULATORS is off");
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
    network: {
      baseUrl: networkUrl,
      token: str(env, "NETWORK_API_TOKEN") ?? (simulators ? "sim-network-token" : ""),
      batchSize: int(env, "NETWORK_BATCH_SIZE", 50, 1, 500),
      email: str(env, "NETWORK_API_EMAIL"),
      proxy: url(env, "NETWORK_API_PROXY", ["http:", "https:"]),
      monitorIntervalMs: int(env, "QR_MONITOR_INTERVAL_MS", 3000, 200, 60000),
      listReprobeMs: int(env, "NETWORK_LIST_REPROBE_MS", 600_000, 1000, 24 * 3600_000),
      singleConcurrency: int(env, "NETWORK_SINGLE_CONCURRENCY", 4, 1, 32),
      expiryGraceMs: int(env, "QR_EXPIRY_GRACE_MS", 600_000, 0, 7 * 24 * 3600_000),
      lateWatchMs: int(env, "QR_LATE_WATCH_MS", 24 * 3600_000, 0, 30 * 24 * 3600_000),
      lateCheckIntervalMs: int(env, "QR_LATE_CHECK_INTERVAL_MS", 300_000, 200, 24 * 3600_000),
    },
    gateway: {
      baseUrl: gatewayUrl,
      monitorIntervalMs: int(env, "GATEWAY_MONITOR_INTERVAL_MS", 4000, 200, 60000),
      proxy: url(env, "GATEWAY_API_PROXY", ["http:", "https:"]),
      pushback: bool(env, "GATEWAY_PUSHBACK", simulators),
    },
    link: {
      chromiumPath: str(env, "CHROMIUM_PATH") ?? "/usr/bin/chromium",
      maxMonitors: int(env, "LINK_MAX_MONITORS", 100, 1, 1000),
      openTimeoutMs: int(env, "LINK_OPEN_TIMEOUT_MS", 20000, 1000, 120000),
      // How a link configuration's page is driven when it names no adapter (gateway-link/link-protocol.ts): the
      // simulator's own page with simulators, a real PayWay link without.
      pageProtocol: oneOf(
        env,
        "LINK_PAGE_PROTOCOL",
        ["simulated", "payway"] as const,
        simulators ? "simulated" : "payway",
      ),
      paywayApiOrigin: origin(env, "PAYWAY_API_ORIGIN") ?? (simulators ? null : "https://pwapp.ababank.com"),
      proxy: url(env, "LINK_PROXY", ["http:", "https:"]),
      lateWatchMs: int(env, "LINK_LATE_WATCH_MS", 15 * 60_000, 0, 24 * 3600_000),
      maxPolls: int(env, "LINK_MAX_POLLS", 5000, 1, 100_000),
      allowedOrigins: origins(env, "LINK_ALLOWED_ORIGINS"),
      sandbox: oneOf(env, "CHROMIUM_SANDBOX", ["auto", "on", "off"] as const, "auto"),
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
    dbPoolSize: int(env, "DB_POOL_SIZE", 10, 1, 100),
  };
}
