import type { Config, EnvReader } from "../config.js";
import { MAX_BATCH_SIZE } from "./network-limits.js";

/** The generic QR area's own settings (docs/configuration.md): the national network and the area's monitor. */
export interface QrSettings {
  /** NETWORK_API_URL; null: the simulated network on this process's port (simulators on only). */
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
  /** Single-md5 calls started per second at most, per process (with jitter, never above). */
  singleRate: number;
  /** How long past expiry a transaction waits for a check that answers (then expires anyway). */
  expiryGraceMs: number;
  /** How long after expiry a late payment is still looked for (0: never). */
  lateWatchMs: number;
  /** How often an expired transaction is checked during the late watch. */
  lateCheckIntervalMs: number;
}

/**
 * Read when the app is created, before anything opens (module.ts `settings`). Without simulators there is no
 * network to fall back on, so its URL is required; with them the simulator's token is the default.
 */
export function qrSettings(env: EnvReader, config: Pick<Config, "simulators">): QrSettings {
  return {
    baseUrl: env.upstreamUrl("NETWORK_API_URL", config.simulators),
    token: env.str("NETWORK_API_TOKEN") ?? (config.simulators ? "sim-network-token" : ""),
    // The list endpoint takes at most 50 md5s a call (docs/decisions/0187-single-md5-rate-cap.md): more is refused.
    batchSize: env.int("NETWORK_BATCH_SIZE", MAX_BATCH_SIZE, 1, MAX_BATCH_SIZE),
    email: env.str("NETWORK_API_EMAIL"),
    proxy: env.url("NETWORK_API_PROXY", ["http:", "https:"]),
    monitorIntervalMs: env.int("QR_MONITOR_INTERVAL_MS", 3000, 200, 60000),
    listReprobeMs: env.int("NETWORK_LIST_REPROBE_MS", 600_000, 1000, 24 * 3600_000),
    singleConcurrency: env.int("NETWORK_SINGLE_CONCURRENCY", 4, 1, 32),
    singleRate: env.int("NETWORK_SINGLE_RATE", 10, 1, 1000),
    expiryGraceMs: env.int("QR_EXPIRY_GRACE_MS", 600_000, 0, 7 * 24 * 3600_000),
    lateWatchMs: env.int("QR_LATE_WATCH_MS", 24 * 3600_000, 0, 30 * 24 * 3600_000),
    lateCheckIntervalMs: env.int("QR_LATE_CHECK_INTERVAL_MS", 300_000, 200, 24 * 3600_000),
  };
}
