import type { App } from "../app.js";
import { gatewayModule } from "../gateway/index.js";
import { linkModule } from "../gateway-link/index.js";
import { demoLinkUrl, DEMO_GATEWAY, DEMO_LINK_PROTOCOL } from "../simulators/demo-upstreams.js";

/**
 * An area's part of the demo tenant (seed.ts): its key, and what the key is bound to. Keyed by area in
 * `DEMO_SEEDS`, beside the areas' simulators (parts.ts): the demo module is where the areas meet their demo.
 */
export interface DemoSeed {
  kind: string;
  label: string;
  /** Its field in demo.json's `keys` (documented: qr, gateway, gatewayLink) and in its `ids`. */
  keyField: string;
  idField: string;
  /** How the banner names its key. */
  bannerLabel: string;
  /** Its entry in demo.json's `simulators`. */
  simulator: { name: string; url(base: string): string };
  /** Creates what its key is bound to: the key input's target field, and ids a restart needs. */
  target?(
    app: App,
    merchantId: string,
    base: string,
  ): Promise<{ input: Record<string, string>; ids: Record<string, string> }>;
  /** On a restart with the same tenant: point what it created at this process (the port may differ). */
  refresh?(app: App, ids: Record<string, string>, base: string): Promise<void>;
}

export const DEMO_SEEDS: Record<string, DemoSeed> = {
  qr: {
    kind: "qr",
    label: "demo qr",
    keyField: "qr",
    idField: "qrKey",
    bannerLabel: "qr key (api-key)",
    simulator: { name: "network", url: (base) => `${base}/sim/network-api` },
  },
  gateway: {
    kind: "gateway",
    label: "demo gateway",
    keyField: "gateway",
    idField: "gatewayKey",
    bannerLabel: "gateway key (api-gateway)",
    simulator: { name: "gateway", url: (base) => `${base}/sim/gateway-api` },
    async target(app, merchantId) {
      const gw = await app.module(gatewayModule).configs.create({
        merchantId,
        name: "Demo gateway",
        upstreamMerchantId: DEMO_GATEWAY.merchantId,
        apiSecret: DEMO_GATEWAY.apiKey,
      });
      return { input: { gatewayConfigId: gw.id }, ids: {} };
    },
  },
  gateway_link: {
    kind: "gateway_link",
    label: "demo link",
    keyField: "gatewayLink",
    idField: "linkKey",
    bannerLabel: "link key (api-gateway-link)",
    simulator: { name: "link", url: demoLinkUrl },
    async target(app, merchantId, base) {
      const link = await app.module(linkModule).configs.create({
        merchantId,
        name: "Demo payment link",
        url: demoLinkUrl(base),
        currency: 116,
        protocol: DEMO_LINK_PROTOCOL,
      });
      return { input: { linkConfigId: link.id }, ids: { linkConfig: link.id } };
    },
    // The link page is on this process's port; a demo from before the PayWay twin moves onto it.
    async refresh(app, ids, base) {
      if (ids.linkConfig)
        await app
          .module(linkModule)
          .configs.update(ids.linkConfig, { url: demoLinkUrl(base), protocol: DEMO_LINK_PROTOCOL });
    },
  },
};
