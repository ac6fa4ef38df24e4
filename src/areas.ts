import express, { type Express } from "express";
import type { Services } from "./services.js";
import type { Scheduler } from "./jobs/scheduler.js";
import { WebhookInbox } from "./simulators/inbox.js";
import { createNetworkClient } from "./qr/network-client.js";
import { qrMonitorJob } from "./qr/qr-monitor.job.js";
import { createGatewayClient } from "./gateway/upstream-client.js";
import { gatewayMonitorJob } from "./gateway/gateway-monitor.job.js";
import { GatewayService } from "./gateway/gateway-service.js";
import { BrowserPool } from "./gateway-link/browser.js";
import { LinkService } from "./gateway-link/link-service.js";
import { linkExpirySweepJob, linkMonitorJob } from "./gateway-link/link-monitor.job.js";
import { createNetworkSimulator, type NetworkSimulator } from "./simulators/network/index.js";
import { createGatewaySimulator, type GatewaySimulator } from "./simulators/gateway/index.js";
import { createLinkSimulator } from "./simulators/link/index.js";
import { DEMO_GATEWAY } from "./demo/demo-upstreams.js";
import { simulatedQr } from "./simulators/upstream-qr.js";

export interface AreaHandles {
  inbox: WebhookInbox | null;
  sims: { network: NetworkSimulator; gateway: GatewaySimulator } | null;
  pool: BrowserPool;
  start(): Promise<void>;
  /** Stop taking new work (before the HTTP server drains). */
  stopIntake(): Promise<void>;
  stop(): Promise<void>;
}

/** Wires the three areas, the simulators (when enabled) and their jobs onto the app. */
export async function mountAreas(ctx: { app: Express; services: Services; scheduler: Scheduler | null; role: string }): Promise<AreaHandles> {
  const { app, services, scheduler } = ctx;
  const { config } = services;
  let inbox: WebhookInbox | null = null;
  let sims: AreaHandles["sims"] = null;
  if (config.simulators) {
    inbox = new WebhookInbox();
    app.use(inbox.router(express));
    // What each issued QR pays, for the network simulator's answers (filled as QRs are issued here).
    const issued = new Map<string, { toAccountId: string; amount: string; currency: string }>();
    services.qr.onIssuedForSimulator = (md5, facts) => {
      issued.set(md5, facts);
      if (issued.size > 100_000) issued.delete(issued.keys().next().value as string);
    };
    const network = createNetworkSimulator({ token: config.network.token, describe: (md5) => issued.get(md5) });
    const gatewayQr = simulatedQr("sim_gateway@abaa", "Sim Gateway");
    const gateway = createGatewaySimulator({ makeQr: (amount, currency) => gatewayQr(amount, currency === "USD" ? 840 : 116) });
    gateway.registerMerchant(DEMO_GATEWAY.merchantId, DEMO_GATEWAY.apiKey);
    const link = createLinkSimulator({ makeQr: simulatedQr("sim_link@abaa", "Sim Pay Link") });
    app.use("/sim/network-api", network.api);
    app.use("/sim/gateway-api", gateway.api);
    app.use(network.controls, gateway.controls, link.router, link.controls);
    sims = { network, gateway };
  }

  const networkClient = createNetworkClient({ baseUrl: config.network.baseUrl ?? `${services.baseUrl}/sim/network-api`, token: config.network.token, timeoutMs: config.upstreamTimeoutMs, batchSize: config.network.batchSize });
  const gatewayClient = createGatewayClient({ baseUrl: config.gateway.baseUrl ?? `${services.baseUrl}/sim/gateway-api`, timeoutMs: config.upstreamTimeoutMs, clock: () => services.clock.now() });
  const pool = new BrowserPool({ executablePath: config.link.chromiumPath, maxPages: config.link.maxMonitors + 20, logger: services.logger });
  services.gateway = new GatewayService(services.store, services.admin, services.auth, gatewayClient, services.clock);
  services.link = new LinkService(services.store, services.admin, services.auth, pool, services.clock, services.logger, {
    openTimeoutMs: config.link.openTimeoutMs,
    // The monitor runs wherever a worker takes the job; in `serve` that is usually this process.
    startMonitor: async (transactionId) => {
      await services.enqueue("link.monitor", { transactionId });
    },
  });

  if (scheduler !== null) {
    scheduler.define(qrMonitorJob(services, networkClient));
    scheduler.define(gatewayMonitorJob(services, gatewayClient));
    scheduler.define(linkMonitorJob(services, services.link, pool));
    scheduler.define(linkExpirySweepJob(services));
  }

  return {
    inbox,
    sims,
    pool,
    async start() {},
    async stopIntake() {},
    async stop() {
      await pool.close();
    },
  };
}
