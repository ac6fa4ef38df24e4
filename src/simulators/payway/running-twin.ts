import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import type { Clock } from "../../clock.js";
import type { Logger } from "../../logger.js";
import { createPaywayTwin, type PaywayTwin } from "./index.js";
import { DEMO_PAYWAY_LINKS } from "../demo-upstreams.js";
import { simulatedQr } from "../upstream-qr.js";

/** How long the twin's QRs say they live (KHQR tag 99): 30 days, as captured real PayWay QRs do. */
const PAYWAY_QR_LIFE_MS = 30 * 24 * 3600_000;

/** The PayWay twin as the service mounts it with simulators: its page on the service's port, its API on its own. */
export interface RunningTwin {
  twin: PaywayTwin;
  /** The API's origin once it listens ("" before). */
  apiOrigin(): string;
  listen(): Promise<void>;
  close(): Promise<void>;
}

export function startTwin(clock: Clock, logger: Logger): RunningTwin {
  let origin = "";
  const twin = createPaywayTwin({
    // A real PayWay QR's tag 99 expiry is 30 days after its creation (docs/link-simulator.md, "The QR's life").
    // The QR names the link's merchant (the demo's links: the demo merchant), as a real link's QR names its shop.
    makeQr: simulatedQr("sim_payway@abaa", "Twin Shop", {
      lifetimeMs: PAYWAY_QR_LIFE_MS,
      now: () => clock.now().getTime(),
    }),
    apiOrigin: () => origin,
    clock: () => clock.now().getTime(),
    pagePath: "/sim/payway",
    links: DEMO_PAYWAY_LINKS,
  });
  let server: Server | null = null;
  return {
    twin,
    apiOrigin: () => origin,
    async listen() {
      // The API on an origin of its own, as pwapp.ababank.com is to link.payway.com.kh; loopback only.
      const s = createServer(express().use(twin.api));
      await new Promise<void>((resolve, reject) => {
        s.once("error", reject);
        s.listen(0, "127.0.0.1", resolve);
      });
      server = s;
      origin = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
      logger.info({ apiOrigin: origin }, "PayWay twin: API listening");
    },
    async close() {
      if (server === null) return;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server?.close(() => resolve()));
      server = null;
    },
  };
}
