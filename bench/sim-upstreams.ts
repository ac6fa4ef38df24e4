// The three simulated upstreams (network md5 API, gateway QR API, payment-link page) in their own process,
// so the service under load runs with SIMULATORS off and NODE_ENV=production: no /sim routes in its router,
// and the simulators' own work (the gateway's PNG per QR, the link page's polls) is not charged to it.
//   PORT=… NETWORK_TOKEN=… node dist/bench/sim-upstreams.js
import express from "express";
import { encodeKhqr } from "../src/khqr/index.js";
import { createNetworkSimulator } from "../src/simulators/network/index.js";
import { createGatewaySimulator } from "../src/simulators/gateway/index.js";
import { createLinkSimulator } from "../src/simulators/link/index.js";

/** The simulated upstream's own KHQR account: a dynamic QR for an amount (as src/areas.ts does). */
function simulatedQr(account: string, name: string) {
  return (amount: string, currency: 116 | 840): string => {
    const now = Date.now();
    return encodeKhqr({
      accountType: "merchant", bakongAccountId: account, merchantName: name, merchantCity: "Phnom Penh", merchantId: "SIM0001",
      acquiringBank: "Simulated Bank", currency, amount, creationTimestamp: now, expirationTimestamp: now + 3600_000,
    }).qr;
  };
}

const network = createNetworkSimulator({ token: process.env.NETWORK_TOKEN ?? "sim-network-token" });
const gatewayQr = simulatedQr("sim_gateway@abaa", "Sim Gateway");
const gateway = createGatewaySimulator({ makeQr: (amount, currency) => gatewayQr(amount, currency === "USD" ? 840 : 116) });
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
