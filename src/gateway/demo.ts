import type { AreaDemo } from "../module.js";
import { createGatewaySimulator } from "../simulators/gateway/index.js";
import { mountSimulator } from "../simulators/http.js";
import { simulatedQr } from "../simulators/upstream-qr.js";
import { DEMO_GATEWAY, DEMO_MERCHANT_NAME } from "../simulators/demo-upstreams.js";
import type { GatewayModule } from "./index.js";
import type { GatewaySettings } from "./settings.js";

/**
 * The hosted gateway area in demo mode (loaded by `gatewayModule.demo`, never by production code): the gateway's
 * simulator on the service's port, and the demo tenant's gateway key, bound to a configuration at the simulator.
 */
export const { part, seed }: AreaDemo<GatewaySettings, GatewayModule> = {
  part(deps) {
    // The gateway's QR names the merchant it knows the order's merchant as: the demo's one merchant.
    const gatewayQr = simulatedQr("sim_gateway@abaa", DEMO_MERCHANT_NAME);
    const gateway = createGatewaySimulator({
      makeQr: (amount, currency) => gatewayQr(amount, currency === "USD" ? 840 : 116),
      clock: () => deps.clock.now(),
    });
    gateway.registerMerchant(DEMO_GATEWAY.merchantId, DEMO_GATEWAY.apiKey);
    return {
      simulator: gateway,
      mount: (app) => mountSimulator(app, "/sim/gateway-api", gateway),
      controls: [
        { label: "Pay", path: "gateway/pay", fields: { tranId: "orderId" }, fixed: { outcome: "APPROVED" } },
        { label: "Decline", path: "gateway/pay", fields: { tranId: "orderId" }, fixed: { outcome: "DECLINED" } },
      ],
    };
  },
  seed: {
    label: "demo gateway",
    keyField: "gateway",
    idField: "gatewayKey",
    bannerLabel: "gateway key (api-gateway)",
    simulator: { name: "gateway", url: (base) => `${base}/sim/gateway-api` },
    payHint: `/sim/gateway/pay {"tranId","outcome"}`,
    async target(gateway, merchantId) {
      const gw = await gateway.configs.create({
        merchantId,
        name: "Demo gateway",
        upstreamMerchantId: DEMO_GATEWAY.merchantId,
        apiSecret: DEMO_GATEWAY.apiKey,
      });
      return { input: { gatewayConfigId: gw.id }, ids: {} };
    },
  },
};
