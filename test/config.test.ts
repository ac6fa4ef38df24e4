import { describe, it, expect } from "@jest/globals";
import { readFileSync } from "node:fs";
import { ConfigError, EnvReader, loadConfig, type Config } from "../src/config.js";
import { MODULES } from "../src/app.js";
import { DEMO_MODULES } from "../src/demo/index.js";
import { qrSettings } from "../src/qr/settings.js";
import { gatewaySettings } from "../src/gateway/settings.js";
import { linkSettings } from "../src/gateway-link/settings.js";

type Env = Record<string, string | undefined>;

/** The environment, and every variable name read from it. */
function recorded(values: Record<string, string>): { env: Env; read: Set<string> } {
  const read = new Set<string>();
  const env = new Proxy(values as Env, {
    get(target, name) {
      if (typeof name === "string") read.add(name);
      return Reflect.get(target, name);
    },
  });
  return { env, read };
}

const ADMIN_TOKEN = "t3L3QrdOh4-gKyrmM36WoFRbB8iNxJ7XgIWrRxLLnrI";
const DEV: Record<string, string> = { NODE_ENV: "test" };
const PROD: Record<string, string> = {
  NODE_ENV: "production",
  ADMIN_TOKEN,
  SECRET_KEY: "config-test-secret-key-Vb7Qx2Nm9Kc4Tw6Jh3Zr8Lp5",
  DATABASE_URL: "postgresql://pqr@127.0.0.1:9/pqr",
  NETWORK_API_URL: "https://network.example",
  GATEWAY_API_URL: "https://gateway.example",
  ADMIN_PORT: "4001",
};

/** What createApp reads: the shared configuration, then each module's own settings from the same environment. */
function readAll(values: Record<string, string>): { config: Config; shared: Set<string>; areas: Set<string> } {
  const shared = recorded(values);
  const config = loadConfig(shared.env, 4096);
  const areas = recorded(values);
  const reader = new EnvReader(areas.env);
  for (const def of DEMO_MODULES) def.settings?.(reader, config);
  return { config, shared: shared.read, areas: areas.read };
}

/** The variables of the Configuration table (docs/configuration.md, linked from the README). */
function documentedVariables(): Set<string> {
  const page = readFileSync("docs/configuration.md", "utf8");
  return new Set([...page.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1] as string));
}

const AREA_VARIABLE = /^(NETWORK_|QR_|GATEWAY_|LINK_|PAYWAY_|CHROMIUM_)/;

describe("configuration: shared settings in config.ts, each area's in its own settings", () => {
  it("config.ts reads no area's variable; the areas read theirs (and nothing shared)", () => {
    for (const values of [DEV, PROD]) {
      const { shared, areas } = readAll(values);
      expect([...shared].filter((name) => AREA_VARIABLE.test(name))).toEqual([]);
      expect([...areas].filter((name) => !AREA_VARIABLE.test(name))).toEqual([]);
      expect([...areas]).toEqual(expect.arrayContaining(["NETWORK_API_URL", "GATEWAY_API_URL", "LINK_MAX_MONITORS"]));
    }
  });

  it("the Configuration table (docs/configuration.md) lists exactly the variables the service reads", () => {
    const read = new Set<string>();
    for (const values of [DEV, PROD, { ...PROD, DATABASE_URL: "", EMBEDDED_IN_PRODUCTION: "1" }]) {
      const { shared, areas } = readAll(values);
      for (const name of [...shared, ...areas]) read.add(name);
    }
    // Its earlier name, read when EGRESS_ALLOW_PRIVATE_URLS is unset: documented in that row.
    read.delete("WEBHOOK_ALLOW_PRIVATE_URLS");
    expect([...read].sort()).toEqual([...documentedVariables()].sort());
  });

  it("the areas' defaults follow the simulators: simulated upstreams in demo mode, the real ones without", () => {
    const sim = loadConfig(DEV, 4096);
    const demo = new EnvReader(DEV);
    expect(qrSettings(demo, sim)).toMatchObject({ baseUrl: null, token: "sim-network-token" });
    expect(gatewaySettings(demo, sim)).toMatchObject({ baseUrl: null, pushback: true });
    expect(linkSettings(demo, sim)).toMatchObject({ paywayApiOrigin: null });

    const prod = loadConfig(PROD, 4096);
    const real = new EnvReader(PROD);
    expect(qrSettings(real, prod)).toMatchObject({ baseUrl: "https://network.example", token: "" });
    expect(gatewaySettings(real, prod)).toMatchObject({ baseUrl: "https://gateway.example", pushback: false });
    expect(linkSettings(real, prod)).toMatchObject({ paywayApiOrigin: "https://pwapp.ababank.com" });
    expect(() => qrSettings(new EnvReader({}), prod)).toThrow("NETWORK_API_URL is required when SIMULATORS is off");
    expect(() => gatewaySettings(new EnvReader({}), prod)).toThrow(
      "GATEWAY_API_URL is required when SIMULATORS is off",
    );
  });

  it("every built-in area declares its settings and the demo module reads the network token the qr area sends", () => {
    expect(MODULES.filter((def) => def.area !== undefined && def.settings === undefined).map((d) => d.name)).toEqual(
      [],
    );
    const env = { ...DEV, NETWORK_API_TOKEN: "own-token" };
    const demo = DEMO_MODULES[0].settings?.(new EnvReader(env), loadConfig(env, 4096));
    // The demo module reads each area's own settings for its demo part: the network simulator's token is the qr area's.
    expect(demo).toContainEqual(expect.objectContaining({ token: "own-token" }));
  });

  it("the payment-link page's open timeout is 45 s unless LINK_OPEN_TIMEOUT_MS says otherwise", () => {
    // 45 s: long enough for a page whose Continue waits for its scripts to hydrate it (issue 37, item 5).
    for (const values of [DEV, PROD]) {
      const config = loadConfig(values, 4096);
      expect(linkSettings(new EnvReader(values), config).openTimeoutMs).toBe(45_000);
      const set = { ...values, LINK_OPEN_TIMEOUT_MS: "20000" };
      expect(linkSettings(new EnvReader(set), config).openTimeoutMs).toBe(20_000);
    }
  });

  it('LINK_USER_AGENT: used as given; one that says "Headless" is refused at start, naming the variable', () => {
    const sim = loadConfig(DEV, 4096);
    const chrome =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
    expect(linkSettings(new EnvReader({ ...DEV, LINK_USER_AGENT: chrome }), sim).userAgent).toBe(chrome);
    expect(linkSettings(new EnvReader(DEV), sim).userAgent).toBeNull();
    for (const headless of [chrome.replace("Chrome/", "HeadlessChrome/"), "Mozilla/5.0 (headless) Chrome/131.0.0.0"]) {
      const read = () => linkSettings(new EnvReader({ ...DEV, LINK_USER_AGENT: headless }), sim);
      expect(read).toThrow(ConfigError);
      expect(read).toThrow('LINK_USER_AGENT must not say "Headless": that is what it is there to hide');
    }
  });
});
