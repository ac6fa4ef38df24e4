// The three simulated upstreams (network md5 API, gateway QR API, payment-link page) in their own process,
// so the service under load runs with SIMULATORS off and NODE_ENV=production: no /sim routes in its router,
// and the simulators' own work (the gateway's PNG per QR, the link page's polls) is not charged to it.
//   PORT=… NETWORK_TOKEN=… node dist/bench/sim-upstreams.js
import express from "express";
import { createNetworkSimulator } from "../src/simulators/network/index.js";
import { createGatewaySimulator } from "../src/simulators/gateway/index.js";
import { createLinkSimulator } from "../src/simulators/link/index.js";
import { simulatedQr } from "../src/simulators/upstream-qr.js";

const network = createNetworkSimulator({ token: process.env.NETWORK_TOKEN ?? "sim-network-token" });
const gatewayQr = simulatedQr("sim_gateway@abaa", "Sim Gateway");
const gateway = createGatewaySimulator({
  makeQr: (amount, currency) => gatewayQr(amount, currency === "USD" ? 840 : 116),
});
const link = createLinkSimulator({ makeQr: simulatedQr("sim_link@abaa", "Sim Pay Link") });

const app = express();
app.disable("x-powered-by");
app.get("/healthz", (_req, res) => void res.json({ ok: true }));
app.use("/sim/network-api", network.api);
app.use("/sim/gateway-api", gateway.api);
app.use(network.controls, gateway.controls, link.router, link.controls);
const server = app.listen(Number(process.env.PORT ?? 0), "127.0.0.1");
process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
