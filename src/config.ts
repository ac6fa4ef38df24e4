import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import ipaddr from "ipaddr.js";
// Types only (erased): the packages themselves are loaded on first use, in production (zxcvbnPackages).
import type * as ZxcvbnCore from "@zxcvbn-ts/core";
import type { ZxcvbnFactory } from "@zxcvbn-ts/core";
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
   * its own loopback receiver (/sim/webhooks) and drives its loopback PayWay twin.
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
   * replays in docs/decisions/0136-replay-capped-and-budgeted.md, each setting in docs/configuration.md.
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
 * The one rule for secret settings — ADMIN_TOKEN, METRICS_TOKEN, SECRET_KEY
 * (docs/decisions/0176-secret-strength-by-alphabet-and-known-values.md): at least 32 characters in every mode; in
 * production also not a well-known value, and a strength estimate of more than 128 bits (so 16 random bytes, at
 * 128 exactly, are refused every time rather than now and then).
 */
export const SECRET_RULE = { minLength: 32, minBits: 128 } as const;

/** Why a secret setting's value breaks the rule, or null. Only the length is checked outside production. */
export function weakSecret(value: string, production: boolean): string | null {
  const { minLength } = SECRET_RULE;
  if (value.length < minLength) return `it has ${value.length} characters, at least ${minLength} are required`;
  return production ? weakInProduction(value, 1) : null;
}

/** The production checks: well-known bytes behind a hex or base64 value, what such a value decodes to, the estimate. */
function weakInProduction(value: string, depth: number): string | null {
  for (const bytes of decodings(value)) {
    const known = knownBytes(bytes);
    if (known !== null) return `it is ${known}`;
    const text = bytes.toString("utf8");
    // A printable decoding is a value written by hand and then encoded: it is judged as itself.
    const inner = depth > 0 && /^[\x20-\x7e]+$/.test(text) ? weakInProduction(text, depth - 1) : null;
    if (inner !== null) return `it decodes to text that is too weak itself: ${inner}`;
  }
  // The separators of hex written in groups (a UUID, a MAC-like form) carry nothing secret.
  const { bits, warning } = strength(/^[0-9a-f]+([-:][0-9a-f]+)+$/i.test(value) ? value.replace(/[-:]/g, "") : value);
  if (bits > SECRET_RULE.minBits) return null;
  return (
    `its strength estimate is ${Math.floor(bits)} bits, more than ${SECRET_RULE.minBits} are required` +
    (warning ? `: ${warning.replace(/\.$/, "")}` : "")
  );
}

/** The bytes a value may stand for: hex (separators allowed, as in a UUID), base64 or base64url. */
function decodings(value: string): Buffer[] {
  const out: Buffer[] = [];
  const hex = value.replace(/[-: ]/g, "");
  if (/^([0-9a-f]{2})+$/i.test(hex)) out.push(Buffer.from(hex, "hex"));
  const b64 = value.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  if (/^[A-Za-z0-9+/]+$/.test(b64) && b64.length % 4 !== 1) {
    const bytes = Buffer.from(b64, "base64");
    if (bytes.toString("base64").replace(/=+$/, "") === b64) out.push(bytes);
  }
  return out;
}

/** What well-known value `bytes` are (a digest of a common word, one byte repeated, a run), or null. */
function knownBytes(bytes: Buffer): string | null {
  if (bytes.length < 8) return null;
  if (bytes.every((b) => b === bytes[0])) return `the byte 0x${bytes.subarray(0, 1).toString("hex")} repeated`;
  const step = ((bytes[1] as number) - (bytes[0] as number) + 256) % 256;
  if (
    (step === 1 || step === 255) &&
    bytes.every((b, i) => i === 0 || (b - (bytes[i - 1] as number) + 256) % 256 === step)
  )
    return "a run of consecutive bytes";
  return knownDigests().get(bytes.toString("hex")) ?? null;
}

/** Words whose digests people paste as secrets, besides the most common passwords of zxcvbn's list. */
const KNOWN_WORDS = [
  ...["", "password", "admin", "secret", "changeme", "change-me", "change_me", "token", "test", "root"],
  ...["default", "example", "secret_key", "secret-key", "secretkey", "admin_token", "admin-token", "admintoken"],
  ...["metrics_token", "api_key", "apikey", "mysecret", "supersecret", "payment_qr", "postgres", "null", "x"],
];
const KNOWN_DIGESTS = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512"];

let digests: Map<string, string> | null = null;

/**
 * Hex digest → what it is: every digest above of the known words and of zxcvbn's first 1,000 common passwords,
 * as typed and with the newline `echo` adds. Built on first use, in production only.
 */
function knownDigests(): Map<string, string> {
  if (digests !== null) return digests;
  digests = new Map();
  const common = (zxcvbnPackages().common.dictionary["passwords-common"] ?? []).slice(0, 1000).map(String);
  for (const word of new Set([...KNOWN_WORDS, ...common]))
    for (const text of [word, `${word}\n`])
      for (const algorithm of KNOWN_DIGESTS)
        digests.set(
          createHash(algorithm).update(text).digest("hex"),
          `the ${algorithm.toUpperCase().replace("SHA", "SHA-")} of ${JSON.stringify(text)}`,
        );
  return digests;
}

/** The three packages of the estimate, loaded on first use (createRequire: loadConfig stays synchronous). */
function zxcvbnPackages(): { core: typeof ZxcvbnCore; common: typeof ZxcvbnCommon; en: typeof ZxcvbnEn } {
  const require = createRequire(import.meta.url);
  return {
    core: require("@zxcvbn-ts/core") as typeof ZxcvbnCore,
    common: require("@zxcvbn-ts/language-common") as typeof ZxcvbnCommon,
    en: require("@zxcvbn-ts/language-en") as typeof ZxcvbnEn,
  };
}

let estimator: ZxcvbnFactory | null = null;

/**
 * The strength estimate in bits: zxcvbn (common and English dictionaries) reads the value as its cheapest sequence of
 * patterns — words, names, keyboard walks, repeats, sequences, dates — and stretches of no pattern, and the bits are
 * the sum over that sequence. zxcvbn's own total also multiplies by the number of orders of the sequence and adds a
 * term growing with its length, which priced 8 random words (103 bits) at 141–153; the sum measured 101–113.
 * Loaded on first use: only a production start pays for the dictionaries (docs/decisions/0141-one-admin-token-rule.md
 * has the figures). The l33t matcher is capped at 10 substitutions: at its default (100) one check of a random
 * 43-character token took 2.2 s instead of 0.3 s, with the same estimates for every token measured.
 */
function strength(value: string): { bits: number; warning: string | null } {
  if (estimator === null) {
    const { core, common, en } = zxcvbnPackages();
    estimator = new core.ZxcvbnFactory({
      dictionary: { ...common.dictionary, ...en.dictionary },
      graphs: common.adjacencyGraphs,
      translations: en.translations,
      l33tMaxSubstitutions: 10,
    });
    pricedByAlphabet(estimator);
  }
  const result = estimator.check(value);
  const log10 = result.sequence.reduce((sum, match) => sum + match.guessesLog10, 0);
  return { bits: log10 / Math.log10(2), warning: result.feedback.warning };
}

/** The part of zxcvbn-ts's scoring (4.2, `Scoring` in dist/scoring/index.mjs) this file adjusts. */
interface Scoring {
  password: string;
  makeBruteforceMatch(i: number, j: number): { token: string };
  mostGuessableMatchSequence(password: string, matches: unknown[], excludeAdditive?: boolean): unknown;
}

/**
 * zxcvbn prices a character it matches no pattern to at 10 guesses, whatever the alphabet: 34 random
 * alphanumerics (202 bits) scored 10^34. Its search for the cheapest reading of a value builds such stretches in
 * one method; given a price there (log2 of the value's alphabet a character; a match carrying `guesses` is taken
 * as priced), the search weighs words, walks and repeats against stretches at their real cost, and reads a phrase
 * as words even where its words are short. The search also runs without its length term (`excludeAdditive`),
 * which at that price made every sequence of many short words cost more than it is worth.
 */
function pricedByAlphabet(factory: ZxcvbnFactory): void {
  const scoring = (factory as unknown as { scoring?: Scoring }).scoring;
  const make = scoring?.makeBruteforceMatch;
  const search = scoring?.mostGuessableMatchSequence;
  if (scoring === undefined || typeof make !== "function" || typeof search !== "function")
    throw new Error("@zxcvbn-ts/core's Scoring changed: config.ts prices unmatched stretches through it");
  let priced = { value: "", log10: 1 };
  scoring.makeBruteforceMatch = function (this: Scoring, i: number, j: number) {
    const match = make.call(this, i, j);
    if (priced.value !== this.password)
      priced = { value: this.password, log10: Math.log10(alphabetSize(this.password)) };
    const guessesLog10 = Math.max(1, match.token.length * priced.log10);
    return { ...match, guesses: 10 ** guessesLog10, guessesLog10 };
  };
  scoring.mostGuessableMatchSequence = function (this: Scoring, password: string, matches: unknown[]) {
    return search.call(this, password, matches, true);
  };
}

/**
 * How many characters a value's characters are drawn from, at least: 10 for digits, 16 for hex (one case), else 26
 * for each case of letters used, 10 for digits, and one for each other character it holds.
 */
export function alphabetSize(value: string): number {
  if (/^[0-9]+$/.test(value)) return 10;
  if (/^[0-9a-f]+$/.test(value) || /^[0-9A-F]+$/.test(value)) return 16;
  const others = new Set(value.replace(/[A-Za-z0-9]/g, "")).size;
  return (/[a-z]/.test(value) ? 26 : 0) + (/[A-Z]/.test(value) ? 26 : 0) + (/[0-9]/.test(value) ? 10 : 0) + others;
}

/** The one advice every refusal of a secret setting ends with: how to make a good one (none is printed). */
const SECRET_ADVICE =
  "use 32 random bytes (`openssl rand -base64 32`, or " +
  "`node -e \"console.log(require('node:crypto').randomBytes(32).toString('base64url'))\"`)";

type Env = Record<string, string | undefined>;

/**
 * A secret setting under the one rule, or null when unset (a ConfigError says why not). `required`: unset is
 * refused too (ADMIN_TOKEN and SECRET_KEY in production).
 */
function checkedSecret(env: Env, name: string, production: boolean, required: boolean): string | null {
  const value = str(env, name);
  if (value === null) {
    if (required) throw new ConfigError(`${name} is required when NODE_ENV=production; ${SECRET_ADVICE}`);
    return null;
  }
  const weak = weakSecret(value, production);
  if (weak !== null) throw new ConfigError(`${name} is too weak (${weak}); ${SECRET_ADVICE}`);
  return value;
}

/** ADMIN_TOKEN, METRICS_TOKEN and SECRET_KEY under the one rule (development: the first and last generated later). */
function checkedSecrets(env: Env, production: boolean) {
  try {
    return {
      adminToken: checkedSecret(env, "ADMIN_TOKEN", production, production),
      secretKey: checkedSecret(env, "SECRET_KEY", production, production),
      metricsToken: checkedSecret(env, "METRICS_TOKEN", production, false),
    };
  } finally {
    // The estimator's ranked dictionaries (about 15 MB of heap) and the digests are not kept for the life of
    // the process.
    estimator = null;
    digests = null;
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
 * zod and envalid were measured against these readers and not adopted
 * (docs/decisions/0229-configuration-reader-stays-ours.md).
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
  const { adminToken, secretKey, metricsToken } = checkedSecrets(env, production);
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
    metricsToken,
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
