import type { Config, EnvReader } from "../config.js";

/** The hosted gateway area's own settings (docs/configuration.md). */
export interface GatewaySettings {
  /** GATEWAY_API_URL; null: the simulated gateway on this process's port (simulators on only). */
  baseUrl: string | null;
  monitorIntervalMs: number;
  proxy: string | null;
  /** Send the per-configuration pushback URL as callback_url (it must be whitelisted at the gateway). */
  pushback: boolean;
}

/**
 * Read when the app is created, before anything opens (module.ts `settings`). Without simulators there is no
 * gateway to fall back on, so its URL is required; the simulator takes pushbacks, so they are on with it.
 */
export function gatewaySettings(env: EnvReader, config: Pick<Config, "simulators">): GatewaySettings {
  return {
    baseUrl: env.upstreamUrl("GATEWAY_API_URL", config.simulators),
    monitorIntervalMs: env.int("GATEWAY_MONITOR_INTERVAL_MS", 4000, 200, 60000),
    proxy: env.url("GATEWAY_API_PROXY", ["http:", "https:"]),
    pushback: env.bool("GATEWAY_PUSHBACK", config.simulators),
  };
}
