import type { Express } from "express";
import type { SimulatorControl } from "../module.js";
import type { Clock } from "../clock.js";
import type { Config, EnvReader } from "../config.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { UpstreamOrigins } from "../upstreams/origins.js";
import { PAYWAY_API } from "../upstreams/origins.js";
import { createNetworkSimulator, type NetworkSimulator } from "../simulators/network/index.js";
import { createGatewaySimulator, type GatewaySimulator } from "../simulators/gateway/index.js";
import { mountSimulator } from "../simulators/http.js";
import { simulatedQr } from "../simulators/upstream-qr.js";
import { DEMO_GATEWAY } from "../simulators/demo-upstreams.js";
import { qrSettings } from "../qr/settings.js";
import { startTwin, type RunningTwin } from "./payway-twin.js";

/**
 * What the simulators must agree on with the areas they stand in for, read by the areas' own settings functions when
 * the app is created (the demo module's `settings`), so a default is written once, in the area.
 */
export interface DemoSettings {
  /** The network API token the generic QR area sends (NETWORK_API_TOKEN, or its simulator default). */
  networkToken: string;
}

export function demoSettings(env: EnvReader, config: Config): DemoSettings {
  return { networkToken: qrSettings(env, config).token };
}

/** What an area's demo part may use: the demo module's own deps and settings. */
export interface DemoPartDeps {
  settings: DemoSettings;
  clock: Clock;
  logger: Logger;
  db: Db;
  upstreamOrigins: Pick<UpstreamOrigins, "set">;
}

/** An area's stand-in upstream in demo mode (and in tests): mounted on the service's port, started and stopped with it. */
export interface DemoPart {
  mount(app: Express): void;
  /** The dashboard's buttons for a transaction of the area (README "Simulator controls"). */
  controls: SimulatorControl[];
  start?(): Promise<void>;
  stop?(): Promise<void>;
}

/** The simulators of the areas this service ships, by area (key kind). An area without one has no demo part. */
export interface DemoSimulators {
  network?: NetworkSimulator;
  gateway?: GatewaySimulator;
  payway?: RunningTwin;
}

/**
 * The demo parts, keyed by the area's name: the only place the areas meet their simulators. A new area that has a
 * simulator adds its entry here; production code (the area's own folder) imports nothing from src/simulators/.
 */
export const DEMO_PARTS: Record<string, (deps: DemoPartDeps, sims: DemoSimulators) => DemoPart> = {
  qr(deps, sims) {
    const network = createNetworkSimulator({
      token: deps.settings.networkToken,
      clock: () => deps.clock.now(),
      // What the paid QR pays, read from the transaction it was issued as (the payee is its merchant's account).
      describe: (md5) => describeQr(deps.db, md5),
    });
    sims.network = network;
    return {
      mount: (app) => mountSimulator(app, "/sim/network-api", network),
      controls: [
        { label: "Pay", path: "network/pay", fields: { md5: "md5" } },
        { label: "Decline", path: "network/fail", fields: { md5: "md5" } },
      ],
    };
  },
  gateway(deps, sims) {
    const gatewayQr = simulatedQr("sim_gateway@abaa", "Sim Gateway");
    const gateway = createGatewaySimulator({
      makeQr: (amount, currency) => gatewayQr(amount, currency === "USD" ? 840 : 116),
      clock: () => deps.clock.now(),
    });
    gateway.registerMerchant(DEMO_GATEWAY.merchantId, DEMO_GATEWAY.apiKey);
    sims.gateway = gateway;
    return {
      mount: (app) => mountSimulator(app, "/sim/gateway-api", gateway),
      controls: [
        { label: "Pay", path: "gateway/pay", fields: { tranId: "orderId" }, fixed: { outcome: "APPROVED" } },
        { label: "Decline", path: "gateway/pay", fields: { tranId: "orderId" }, fixed: { outcome: "DECLINED" } },
      ],
    };
  },
  gateway_link(deps, sims) {
    const twin = startTwin(deps.clock, deps.logger);
    sims.payway = twin;
    return {
      mount(app) {
        app.use(twin.twin.controls, twin.twin.page);
      },
      controls: [
        { label: "Scan", path: "link/scan", fields: { clientId: "clientId" } },
        { label: "Approve", path: "link/approve", fields: { clientId: "clientId" } },
        { label: "Break", path: "link/break", fields: { clientId: "clientId" } },
      ],
      async start() {
        await twin.listen();
        deps.upstreamOrigins.set(PAYWAY_API, twin.apiOrigin());
      },
      stop: () => twin.close(),
    };
  },
};

async function describeQr(
  db: Db,
  md5: string,
): Promise<{ toAccountId: string; amount: string; currency: string } | undefined> {
  const rows = await db.query<{ amount: string; currency: string; bakong_account_id: string }>(
    `select t.amount, t.currency, m.bakong_account_id from "transaction" t join merchant m on m.id = t.merchant_ref
     where t.md5 = ? and t.area = 'qr' order by t.created_at desc limit 1`,
    [md5],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    toAccountId: row.bakong_account_id,
    amount: Number(row.amount).toFixed(row.currency === "KHR" ? 0 : 2),
    currency: row.currency,
  };
}
