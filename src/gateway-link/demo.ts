import type { AreaDemo } from "../module.js";
import { PAYWAY_API } from "../upstreams/origins.js";
import { demoLinkUrl, DEMO_LINK_PROTOCOL } from "../simulators/demo-upstreams.js";
import { startTwin } from "../simulators/payway/running-twin.js";
import type { LinkModule } from "./index.js";
import type { LinkSettings } from "./settings.js";

/**
 * The payment-link area in demo mode (loaded by `linkModule.demo`, never by production code): the PayWay twin (its
 * page and controls on the service's port, its API on a port of its own), and the demo tenant's link key, bound to
 * a link configuration of the twin's page.
 */
export const { part, seed }: AreaDemo<LinkSettings, LinkModule> = {
  part(deps) {
    const twin = startTwin(deps.clock, deps.logger);
    return {
      simulator: twin,
      mount(app) {
        app.use(twin.twin.controls, twin.twin.page);
      },
      controls: [
        { label: "Scan", path: "link/scan", fields: { clientId: "clientId" } },
        { label: "Approve", path: "link/approve", fields: { clientId: "clientId" } },
        { label: "Break", path: "link/break", fields: { clientId: "clientId" } },
      ],
      async start() {
        await twin.listen();
        deps.upstreamOrigins.set(PAYWAY_API, twin.apiOrigin());
      },
      stop: () => twin.close(),
    };
  },
  seed: {
    label: "demo link",
    keyField: "gatewayLink",
    idField: "linkKey",
    bannerLabel: "link key (api-gateway-link)",
    simulator: { name: "link", url: demoLinkUrl },
    payHint: `/sim/link/approve {"clientId"}`,
    async target(link, merchantId, base) {
      const config = await link.configs.create({
        merchantId,
        name: "Demo payment link",
        url: demoLinkUrl(base),
        currency: 116,
        protocol: DEMO_LINK_PROTOCOL,
      });
      return { input: { linkConfigId: config.id }, ids: { linkConfig: config.id } };
    },
    // The link page is on this process's port; a demo from before the PayWay twin moves onto it.
    async refresh(link, ids, base) {
      if (ids.linkConfig)
        await link.configs.update(ids.linkConfig, { url: demoLinkUrl(base), protocol: DEMO_LINK_PROTOCOL });
    },
  },
};
