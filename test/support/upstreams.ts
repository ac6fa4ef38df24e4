// The three simulated upstreams, run in the test's own process (never the one being killed), each on
// its own port so one can be taken down (connection refused) and brought back on the same port. Every
// request reaching an upstream API is counted on arrival, before any injected delay, so a test knows
// when a worker is in the middle of a call.

import { createServer, type Server } from "node:http";
import { randomBytes } from "node:crypto";
import express, { type RequestHandler } from "express";
import { createNetworkSimulator, type NetworkSimulator } from "../../src/simulators/network/index.js";
import { createGatewaySimulator, type GatewaySimulator } from "../../src/simulators/gateway/index.js";
import { createPaywayTwin, type PaywayTwin } from "../../src/simulators/payway/index.js";
import { DEMO_PAYWAY_LINKS } from "../../src/simulators/demo-upstreams.js";
import { closeNow, listenLoopback } from "./listen.js";
import { sleep } from "./wait.js";
import type { TenantOptions } from "./app.js";

export const NETWORK_TOKEN = "faults-network-token";

/**
 * An upstream: its API (what the service calls) on a fixed loopback port that can go down and come
 * back, and its controls (the payer's actions, fault injection) on a port of their own that stays up.
 */
export class Upstream {
  private server: Server | null = null;
  private controlServer: Server | null = null;
  port = 0;
  controlPort = 0;
  /** Requests that reached the API (counted before faults and delays), in all and by last path segment. */
  arrivals = 0;
  readonly byPath = new Map<string, number>();

  constructor(
    readonly name: string,
    readonly app: express.Express,
    readonly controls: express.Express,
  ) {}

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get controlBase(): string {
    return `http://127.0.0.1:${this.controlPort}`;
  }

  async startControls(): Promise<void> {
    const server = createServer(this.controls);
    this.controlPort = await listenLoopback(server, 0);
    this.controlServer = server;
  }

  async close(): Promise<void> {
    await this.down();
    const server = this.controlServer;
    this.controlServer = null;
    if (server) await new Promise<void>((r) => server.close(() => r()));
  }

  get isUp(): boolean {
    return this.server !== null;
  }

  async up(): Promise<void> {
    if (this.server) return;
    const server = createServer(this.app);
    this.port = await listenLoopback(server, this.port);
    this.server = server;
  }

  /** Closes the port: callers get "connection refused"; requests in flight are cut. */
  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    await closeNow(server);
  }

  readonly count: RequestHandler = (req, _res, next) => {
    this.arrivals += 1;
    const last = req.path.split("/").pop() ?? "";
    this.byPath.set(last, (this.byPath.get(last) ?? 0) + 1);
    next();
  };

  calls(pathEnd: string): number {
    return this.byPath.get(pathEnd) ?? 0;
  }

  /** Resolves once `n` more API requests have arrived than when it was called. */
  async waitArrivals(n: number, timeoutMs = 30_000): Promise<void> {
    const target = this.arrivals + n;
    const until = Date.now() + timeoutMs;
    while (this.arrivals < target) {
      if (Date.now() > until)
        throw new Error(`${this.name}: ${target - this.arrivals} of ${n} expected upstream calls never arrived`);
      await sleep(20);
    }
  }

  async post(path: string, body: unknown): Promise<{ status: number; body: unknown }> {
    const res = await fetch(this.controlBase + path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* keep text */
    }
    return { status: res.status, body: parsed };
  }
}

export type FaultKind = "down" | "slow" | "garbage";

export interface Upstreams {
  network: Upstream & { sim: NetworkSimulator };
  gateway: Upstream & { sim: GatewaySimulator };
  /** The PayWay twin: its page on 127.0.0.1 and its API as `localhost` of the same port (two hosts, two cookie jars). */
  link: Upstream & { sim: PaywayTwin };
  /** Environment for the service processes: where the upstreams are. */
  env: Record<string, string>;
  /** A payment-link URL on the PayWay twin, as the admin configures it (its KHR link; every slug shares it). */
  linkUrl(slug: string): string;
  /**
   * A merchant's accounts on these upstreams, as createTenant's options: its own network account, gateway
   * credentials (registered with the gateway simulator now) and payment-link page (the PayWay twin's).
   */
  tenantOptions(
    name: string,
  ): Required<
    Pick<TenantOptions, "name" | "bakongAccountId" | "gatewayMerchantId" | "gatewaySecret" | "linkUrl" | "linkProtocol">
  >;
  /**
   * Start / end one kind of fault on one upstream (down = port closed; slow = 5 s answers; garbage = unreadable
   * answers; on the PayWay twin, garbage is an outage of its API: 502s).
   */
  fault(which: "network" | "gateway" | "link", kind: FaultKind | "ok", slowMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A QR string stand-in for the simulated gateway and link page (the service stores it, never decodes it). */
function fakeQr(amount: string, currency: string | number): string {
  return `SIMQR-${amount}-${currency}-${randomBytes(6).toString("hex")}`;
}

export async function startUpstreams(): Promise<Upstreams> {
  const networkSim = createNetworkSimulator({ token: NETWORK_TOKEN });
  const network = Object.assign(new Upstream("network", express(), express()), { sim: networkSim });
  network.app.use("/sim/network-api", network.count, networkSim.api);
  network.controls.use(networkSim.controls);

  const gatewaySim = createGatewaySimulator({ makeQr: fakeQr });
  const gateway = Object.assign(new Upstream("gateway", express(), express()), { sim: gatewaySim });
  gateway.app.use("/sim/gateway-api", gateway.count, gatewaySim.api);
  gateway.controls.use(gatewaySim.controls);

  let linkPort = 0;
  const twin = createPaywayTwin({
    makeQr: (amount, currency) => fakeQr(amount, currency),
    apiOrigin: () => `http://localhost:${linkPort}`,
    pagePath: "/sim/payway",
    links: DEMO_PAYWAY_LINKS,
  });
  const link = Object.assign(new Upstream("link", express(), express()), { sim: twin });
  link.app.use(link.count, twin.api, twin.page);
  link.controls.use(twin.controls);

  await Promise.all([
    network.up(),
    gateway.up(),
    link.up(),
    network.startControls(),
    gateway.startControls(),
    link.startControls(),
  ]);
  linkPort = link.port;
  const all = { network, gateway, link };
  return {
    ...all,
    env: {
      NETWORK_API_URL: `${network.base}/sim/network-api`,
      NETWORK_API_TOKEN: NETWORK_TOKEN,
      GATEWAY_API_URL: `${gateway.base}/sim/gateway-api`,
      PAYWAY_API_ORIGIN: `http://localhost:${link.port}`,
    },
    linkUrl: () => `${link.base}/sim/payway/${DEMO_PAYWAY_LINKS[0].code}`,
    tenantOptions(name) {
      const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, "-");
      const gatewayMerchantId = `fm_${randomBytes(4).toString("hex")}`;
      const gatewaySecret = `faults-gw-secret-${randomBytes(6).toString("hex")}`;
      gatewaySim.registerMerchant(gatewayMerchantId, gatewaySecret);
      return {
        name,
        bakongAccountId: `${slug.slice(0, 12)}@devb`,
        gatewayMerchantId,
        gatewaySecret,
        linkUrl: `${link.base}/sim/payway/${DEMO_PAYWAY_LINKS[0].code}`,
        linkProtocol: "payway",
      };
    },
    async fault(which, kind, slowMs = 5000) {
      const u = all[which];
      if (kind === "down") return u.down();
      await u.up();
      const res =
        which === "link"
          ? await twinFault(u, kind, slowMs)
          : await u.post(`/sim/${which}/fault`, { mode: kind, slowMs, variant: "text" });
      if (res.status !== 200) throw new Error(`${which} fault ${kind}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    },
    async close() {
      await Promise.all([network.close(), gateway.close(), link.close()]);
    },
  };
}

/** The PayWay twin's fault for one of the kinds the other upstreams share (garbage: its API answers 502s). */
function twinFault(u: Upstream, kind: "slow" | "garbage" | "ok", slowMs: number) {
  if (kind === "garbage") return u.post("/sim/payway/fault", { mode: "outage", httpStatus: 502 });
  return u.post("/sim/payway/fault", kind === "slow" ? { mode: "slow", slowMs } : { mode: "ok" });
}
