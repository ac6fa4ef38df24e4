import { ConfigError, type Config, type EnvReader } from "../config.js";
import { PAYWAY_DEFAULT_API_ORIGIN } from "../upstreams/payway.js";

/** The payment-link area's own settings (docs/configuration.md). */
export interface LinkSettings {
  chromiumPath: string;
  /** LINK_MAX_MONITORS: pages held at once per worker (pages polled through after refused polls). */
  maxMonitors: number;
  /** LINK_OPEN_PAGES: pages of the pool kept for opening (generates), which held pages never take. */
  openPages: number;
  /** Fair shares of the pool per merchant and per payment-link configuration (page-shares.ts), per worker. */
  shares: {
    heldPerMerchant: number;
    heldPerConfig: number;
    opensPerMerchant: number;
    opensPerConfig: number;
  };
  /**
   * LINK_OPEN_TIMEOUT_MS: bound on obtaining a QR from a page, from asking the pool for a page to the API's answer
   * (45 s: a page whose Continue waits for its scripts to hydrate it is waited for, as a working scraper waits).
   */
  openTimeoutMs: number;
  /**
   * Origin of a PayWay link page's API (PAYWAY_API_ORIGIN); null: the built-in twin's (simulators on), which is
   * only known once it listens.
   */
  paywayApiOrigin: string | null;
  /** Proxy for Chromium and the status poller of payment-link pages (LINK_PROXY), or null. */
  proxy: string | null;
  /**
   * LINK_LATE_WATCH_MS: how long after EXPIRED a payment followed without a browser is still polled for a late
   * approval (0: never). Default 24 h; at most 30 days, the life of the QR itself (KHQR tag 99 of real PayWay QRs is
   * creation + 30 days). About one poll a minute the first hour, then one every 10 minutes
   * (docs/decisions/0188-link-late-watch-for-the-qrs-life.md).
   */
  lateWatchMs: number;
  /** Payments followed without a browser, per worker (LINK_MAX_POLLS). */
  maxPolls: number;
  /** How often such a payment's status is polled (LINK_POLL_INTERVAL_MS; the real page's cadence, 3 s). */
  pollIntervalMs: number;
  /**
   * LINK_POLL_RATE: status polls one worker sends per second at most, all payments together (pending ones first,
   * late ones with what is left). Default 1000: 3,000 payments at the page's 3 s, more than the 2,000 a worker is
   * measured to follow; beyond it polls are spread out (link_poll_lateness_p99_seconds shows it). It also spreads the
   * bursts: a take-over's claims, the polls held back by a 429 (docs/decisions/0190-polite-link-polls.md).
   */
  pollRate: number;
  /** Origins a payment-link page may load from besides its own, and receipts may be on (LINK_ALLOWED_ORIGINS). */
  allowedOrigins: string[];
  /** CHROMIUM_SANDBOX: auto (the sandbox where this machine allows it), on, off. */
  sandbox: "auto" | "on" | "off";
  /**
   * LINK_USER_AGENT: the user agent of the pages and of the polls sent without them; null: a current Chrome's on
   * Linux, of the installed Chromium's major version (browser-identity.ts).
   */
  userAgent: string | null;
}

/**
 * Read when the app is created, before anything opens (module.ts `settings`). With simulators PayWay is the
 * built-in twin; without them, a real PayWay link.
 */
export function linkSettings(env: EnvReader, config: Pick<Config, "simulators">): LinkSettings {
  const { simulators } = config;
  const maxMonitors = env.int("LINK_MAX_MONITORS", 100, 1, 1000);
  const openPages = env.int("LINK_OPEN_PAGES", 20, 1, 1000);
  return {
    chromiumPath: env.str("CHROMIUM_PATH") ?? "/usr/bin/chromium",
    maxMonitors,
    openPages,
    shares: shareSettings(env, maxMonitors, openPages),
    openTimeoutMs: env.int("LINK_OPEN_TIMEOUT_MS", 45000, 1000, 120000),
    paywayApiOrigin: env.origin("PAYWAY_API_ORIGIN") ?? (simulators ? null : PAYWAY_DEFAULT_API_ORIGIN),
    proxy: env.url("LINK_PROXY", ["http:", "https:"]),
    lateWatchMs: env.int("LINK_LATE_WATCH_MS", 24 * 3600_000, 0, 30 * 24 * 3600_000),
    maxPolls: env.int("LINK_MAX_POLLS", 5000, 1, 100_000),
    pollIntervalMs: env.int("LINK_POLL_INTERVAL_MS", 3000, 200, 30_000),
    pollRate: env.int("LINK_POLL_RATE", 1000, 1, 100_000),
    allowedOrigins: env.origins("LINK_ALLOWED_ORIGINS"),
    sandbox: env.oneOf("CHROMIUM_SANDBOX", ["auto", "on", "off"] as const, "auto"),
    userAgent: userAgentSetting(env),
  };
}

/** LINK_USER_AGENT as a header value can carry it: printable ASCII, one line, and not a headless browser's. */
function userAgentSetting(env: EnvReader): string | null {
  const raw = env.str("LINK_USER_AGENT");
  if (raw === null) return null;
  if (!/^[\x20-\x7e]{1,512}$/.test(raw))
    throw new ConfigError("LINK_USER_AGENT must be one line of printable ASCII, at most 512 characters");
  if (/headless/i.test(raw))
    throw new ConfigError('LINK_USER_AGENT must not say "Headless": that is what it is there to hide');
  return raw;
}

/**
 * By default a merchant may hold a quarter of the worker's held pages and open half of its opening pages at once, and
 * each of its configurations as much as the merchant (set them lower to keep one configuration from using the
 * merchant's whole share).
 */
function shareSettings(env: EnvReader, maxMonitors: number, openPages: number): LinkSettings["shares"] {
  const heldPerMerchant = env.int("LINK_HELD_PAGES_PER_MERCHANT", Math.max(1, Math.floor(maxMonitors / 4)), 1, 1000);
  const opensPerMerchant = env.int("LINK_OPENS_PER_MERCHANT", Math.max(1, Math.floor(openPages / 2)), 1, 1000);
  return {
    heldPerMerchant,
    heldPerConfig: env.int("LINK_HELD_PAGES_PER_CONFIG", heldPerMerchant, 1, 1000),
    opensPerMerchant,
    opensPerConfig: env.int("LINK_OPENS_PER_CONFIG", opensPerMerchant, 1, 1000),
  };
}
