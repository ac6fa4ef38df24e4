import type { App } from "../../src/app.js";
import { demoModule } from "../../src/demo/index.js";
import type { NetworkSimulator } from "../../src/simulators/network/index.js";
import type { GatewaySimulator } from "../../src/simulators/gateway/index.js";
import type { RunningTwin } from "../../src/simulators/payway/running-twin.js";

/** The simulators of a test app's demo parts (each area's `demo.ts`), by what they are. */
function simulator<T>(app: App, kind: string): T {
  const sim = app.module(demoModule).simulators[kind];
  if (sim === undefined) throw new Error(`no simulator for the ${kind} area in this app`);
  return sim as T;
}

/** The national network's simulator (the qr area's demo part). */
export const networkSim = (app: App) => simulator<NetworkSimulator>(app, "qr");
/** The hosted gateway's simulator. */
export const gatewaySim = (app: App) => simulator<GatewaySimulator>(app, "gateway");
/** The PayWay twin (the payment-link area's demo part). */
export const paywaySim = (app: App) => simulator<RunningTwin>(app, "gateway_link");
