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
  network: { baseUrl: string | null; token: string; batchSize: number; monitorIntervalMs: number };
  gateway: { baseUrl: string | null; monitorIntervalMs: number };
  link: { chromiumPath: string; maxMonitors: number; openTimeoutMs: number; pageProtocol: "simulated" };
  upstreamTimeoutMs: number;
  mongodbUrl: string | null;
  webhooks: { timeoutMs: number; retryForMs: number; disableAfterMs: number; allowPrivateUrls: boolean };
  rateLimit: { perMinute: number };
  dbPoolSize: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

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
  if (production && adminToken === null) throw new ConfigError("ADMIN_TOKEN is required when NODE_ENV=production");
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
    host: str(env, "HOST") ?? "0.0.0.0",
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
      monitorIntervalMs: int(env, "QR_MONITOR_INTERVAL_MS", 3000, 200, 60000),
    },
    gateway: { baseUrl: gatewayUrl, monitorIntervalMs: int(env, "GATEWAY_MONITOR_INTERVAL_MS", 4000, 200, 60000) },
    link: {
      chromiumPath: str(env, "CHROMIUM_PATH") ?? "/usr/bin/chromium",
      maxMonitors: int(env, "LINK_MAX_MONITORS", 100, 1, 1000),
      openTimeoutMs: int(env, "LINK_OPEN_TIMEOUT_MS", 20000, 1000, 120000),
      // How the payment-link page is driven (gateway-link/link-protocol.ts); the real page needs its own adapter.
      pageProtocol: oneOf(env, "LINK_PAGE_PROTOCOL", ["simulated"] as const, "simulated"),
    },
    upstreamTimeoutMs: int(env, "UPSTREAM_TIMEOUT_MS", 10000, 100, 120000),
    mongodbUrl: url(env, "MONGODB_URL", ["mongodb:", "mongodb+srv:"]),
    webhooks: {
      timeoutMs: int(env, "WEBHOOK_TIMEOUT_MS", 10000, 100, 60000),
      retryForMs: int(env, "WEBHOOK_RETRY_FOR_MS", 24 * 3600_000, 1000, 30 * 24 * 3600_000),
      disableAfterMs: int(env, "WEBHOOK_DISABLE_AFTER_MS", 3 * 24 * 3600_000, 1000, 30 * 24 * 3600_000),
      allowPrivateUrls: bool(env, "WEBHOOK_ALLOW_PRIVATE_URLS", !production),
    },
    rateLimit: { perMinute: int(env, "RATE_LIMIT_PER_MINUTE", 6000, 0, 1_000_000) },
    dbPoolSize: int(env, "DB_POOL_SIZE", 10, 1, 100),
  };
}
