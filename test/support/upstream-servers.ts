import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { TEST_KEEP_ALIVE_MS } from "./listen.js";
import { createGatewaySimulator, type GatewaySimulator } from "../../src/simulators/gateway/index.js";
import {
  createNetworkSimulator,
  type NetworkPaymentFacts,
  type NetworkSimulator,
} from "../../src/simulators/network/index.js";

/** Real HTTP servers on 127.0.0.1, port 0, for the upstream clients and simulators to talk to. */

export interface Running {
  base: string;
  close(): Promise<void>;
}

export async function listen(app: express.Express): Promise<Running> {
  const server: Server = createServer(app);
  server.keepAliveTimeout = TEST_KEEP_ALIVE_MS;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections(); // requests the "timeout" fault holds open
        server.close(() => resolve());
      }),
  };
}

/** A port where nothing listens (bound once, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface Reply {
  status: number;
  text: string;
  json: unknown;
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

export interface NetworkHarness extends Running {
  sim: NetworkSimulator;
  apiBase: string;
  facts: Map<string, NetworkPaymentFacts>;
}

/** The network simulator mounted the way the app mounts it. */
export async function startNetworkSimulator(token: string, clock?: () => Date): Promise<NetworkHarness> {
  const facts = new Map<string, NetworkPaymentFacts>();
  const sim = createNetworkSimulator({ token, clock, describe: (md5) => facts.get(md5) });
  const app = express();
  app.use("/sim/network-api", sim.api);
  app.use(sim.controls);
  const running = await listen(app);
  return { ...running, sim, facts, apiBase: `${running.base}/sim/network-api` };
}

export interface GatewayHarness extends Running {
  sim: GatewaySimulator;
  apiBase: string;
  /** Request bodies as they reached the simulator's API, oldest first. */
  received: Record<string, unknown>[];
}

/** A deterministic stand-in for the KHQR encoder (the codec lives in src/khqr). */
export function fakeKhqr(amount: string, currency: "USD" | "KHR"): string {
  return `00020101021229190015sim@devb5303${currency === "USD" ? "840" : "116"}54${String(amount.length).padStart(2, "0")}${amount}5802KH6304ABCD`;
}

/** `capture` parses bodies in front of the simulator to record them; off, the simulator parses alone. */
export async function startGatewaySimulator(clock?: () => Date, capture = true): Promise<GatewayHarness> {
  const sim = createGatewaySimulator({ makeQr: fakeKhqr, clock });
  const received: Record<string, unknown>[] = [];
  const app = express();
  const record: express.RequestHandler = (req, _res, next) => {
    received.push(req.body as Record<string, unknown>);
    next();
  };
  if (capture) app.use("/sim/gateway-api", express.json(), record, sim.api);
  else app.use("/sim/gateway-api", sim.api);
  app.use(sim.controls);
  const running = await listen(app);
  return { ...running, sim, received, apiBase: `${running.base}/sim/gateway-api` };
}
