import { describe, it, expect } from "@jest/globals";
import { readFileSync } from "node:fs";
import { EnvReader, loadConfig, type Config } from "../src/config.js";
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

/** The variables of the README's Configuration table. */
function readmeVariables(): Set<string> {
  const readme = readFileSync("README.md", "utf8");
  const section = readme.slice(readme.indexOf("\n## Configuration\n"), readme.indexOf("\n## Security\n"));
  return new Set([...section.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1] as string));
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

  it("the README's Configuration table lists exactly the variables the service reads", () => {
    const read = new Set<string>();
    for (const values of [DEV, PROD, { ...PROD, DATABASE_URL: "", EMBEDDED_IN_PRODUCTION: "1" }]) {
      const { shared, areas } = readAll(values);
      for (const name of [...shared, ...areas]) read.add(name);
    }
    // Its earlier name, read when EGRESS_ALLOW_PRIVATE_URLS is unset: documented in that row.
    read.delete("WEBHOOK_ALLOW_PRIVATE_URLS");
    expect([...read].sort()).toEqual([...readmeVariables()].sort());
  });

  it("the areas' defaults follow the simulators: simulated upstreams in demo mode, the real ones without", () => {
    const sim = loadConfig(DEV, 4096);
    const demo = new EnvReader(DEV);
    expect(qrSettings(demo, sim)).toMatchObject({ baseUrl: null, token: "sim-network-token" });
    expect(gatewaySettings(demo, sim)).toMatchObject({ baseUrl: null, pushback: true });
    expect(linkSettings(demo, sim)).toMatchObject({ pageProtocol: "simulated", paywayApiOrigin: null });

    const prod = loadConfig(PROD, 4096);
    const real = new EnvReader(PROD);
    expect(qrSettings(real, prod)).toMatchObject({ baseUrl: "https://network.example", token: "" });
    expect(gatewaySettings(real, prod)).toMatchObject({ baseUrl: "https://gateway.example", pushback: false });
    expect(linkSettings(real, prod)).toMatchObject({
      pageProtocol: "payway",
      paywayApiOrigin: "https://pwapp.ababank.com",
    });
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
    expect(demo).toEqual({ networkToken: "own-token" });
  });
});
