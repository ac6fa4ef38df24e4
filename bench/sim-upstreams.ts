// The simulated upstreams (network md5 API, gateway QR API, the payment-link page: the PayWay twin, whose API
// listens on PAYWAY_API_PORT) in their own process, so the service under load runs with
// SIMULATORS off and NODE_ENV=production: no /sim routes in its router, and the simulators' own work (the
// gateway's PNG per QR, the link page's polls) is not charged to it. /bench/floor is the one-line page with one
// API call that bench/link-payway.ts measures Chromium alone against.
//   PORT=… PAYWAY_API_PORT=… NETWORK_TOKEN=… node dist/bench/sim-upstreams.js
import express from "express";
import { createNetworkSimulator } from "../src/simulators/network/index.js";
import { createGatewaySimulator } from "../src/simulators/gateway/index.js";
import { createPaywayTwin } from "../src/simulators/payway/index.js";
import { DEMO_PAYWAY_LINKS } from "../src/simulators/demo-upstreams.js";
import { simulatedQr } from "../src/simulators/upstream-qr.js";

const network = createNetworkSimulator({ token: process.env.NETWORK_TOKEN ?? "sim-network-token" });
const gatewayQr = simulatedQr("sim_gateway@abaa", "Sim Gateway");
const gateway = createGatewaySimulator({
  makeQr: (amount, currency) => gatewayQr(amount, currency === "USD" ? 840 : 116),
});

const paywayPort = Number(process.env.PAYWAY_API_PORT ?? 0);
const payway = createPaywayTwin({
  makeQr: simulatedQr("sim_payway@abaa", "Sim PayWay Shop"),
  apiOrigin: () => `http://127.0.0.1:${paywayPort}`,
  pagePath: "/sim/payway",
  links: DEMO_PAYWAY_LINKS,
});

const app = express();
app.disable("x-powered-by");
app.get("/healthz", (_req, res) => void res.json({ ok: true }));
app.get("/bench/floor", (_req, res) => {
  res
    .type("html")
    .send(
      `<!doctype html><html><body><p id="x">floor</p><script>fetch("/bench/floor/api",{method:"POST"})</script></body></html>`,
    );
});
app.post("/bench/floor/api", (_req, res) => void res.json({ ok: true }));
app.use("/sim/network-api", network.api);
app.use("/sim/gateway-api", gateway.api);
app.use(network.controls, gateway.controls, payway.controls, payway.page);
const server = app.listen(Number(process.env.PORT ?? 0), "127.0.0.1");
const paywayApi = express().use(payway.api).listen(paywayPort, "127.0.0.1");
process.on("SIGTERM", () => {
  for (const s of [server, paywayApi]) {
    s.close();
    s.closeAllConnections();
  }
  process.exit(0);
});
