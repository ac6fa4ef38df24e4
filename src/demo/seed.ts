import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { App } from "../app.js";
import { WebhookEndpointService } from "../webhooks/endpoint-service.js";
import { webhooksModule } from "../webhooks/index.js";
import { gatewayModule } from "../gateway/index.js";
import { linkModule } from "../gateway-link/index.js";
import { demoLinkUrl, DEMO_GATEWAY, DEMO_LINK_PROTOCOL } from "../simulators/demo-upstreams.js";

export interface DemoFile {
  baseUrl: string;
  adminToken: string;
  keys: { qr: string; gateway: string; gatewayLink: string };
  webhook: { url: string; secret: string };
  simulators: { network: string; gateway: string; link: string };
  /** Not among the documented demo.json fields; kept so a restart finds the same tenant. */
  ids?: { merchant: string; qrKey: string; gatewayKey: string; linkKey: string; linkConfig: string; webhook: string };
}

/**
 * The demo tenant of `npm start`: a merchant, one key of each kind, a webhook endpoint pointing at the
 * built-in inbox; printed and written to DATA_DIR/demo.json. Restarting reuses the same tenant and keys.
 */
/** The demo merchant's deeplink settings: its generic QRs carry a deeplink (issue 20). */
const DEMO_DEEPLINK = {
  deeplinkAppName: "Demo Coffee",
  deeplinkAppIconUrl: "https://demo-coffee.example/icon.png",
  deeplinkCallback: "democoffee://payment-done",
};

/**
 * `print` receives the banner (keys, URLs, what to try): main.ts prints it on stdout; a test that seeds a demo
 * in its own process passes nothing, so its output stays the test runner's.
 */
export async function seedDemo(app: App, print: (banner: string) => void = () => undefined): Promise<DemoFile> {
  const { config, admin } = app.core;
  const webhooks = app.module(webhooksModule).endpoints;
  const gatewayConfigs = app.module(gatewayModule).configs;
  const linkConfigs = app.module(linkModule).configs;
  const file = join(config.dataDir, "demo.json");
  const base = app.url;
  const previous = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as DemoFile) : null;
  const existing = previous?.ids ? await admin.merchant(previous.ids.merchant) : null;
  let demo: DemoFile;
  if (previous?.ids && existing) {
    demo = { ...previous, baseUrl: base };
    // The port may differ from the last run: keep the tenant's URLs pointing at this process (and a demo from
    // before the PayWay twin on it).
    await linkConfigs.update(previous.ids.linkConfig, { url: demoLinkUrl(base), protocol: DEMO_LINK_PROTOCOL });
    await webhooks.update(previous.ids.webhook, { url: `${base}/sim/inbox` });
    // Demo data from before deeplink settings existed gets them too.
    if (existing.deeplinkAppName === null) await admin.updateMerchant(existing.id, DEMO_DEEPLINK);
  } else {
    const merchant = await admin.createMerchant({
      name: "Demo Coffee",
      accountType: "merchant",
      bakongAccountId: "demo_coffee@devb",
      merchantName: "Demo Coffee",
      merchantCity: "Phnom Penh",
      merchantId: "DEMO001",
      acquiringBank: "Dev Bank",
      merchantCategoryCode: "5814",
      defaultCurrency: 840,
      ...DEMO_DEEPLINK,
    });
    const gw = await gatewayConfigs.create({
      merchantId: merchant.id,
      name: "Demo gateway",
      upstreamMerchantId: DEMO_GATEWAY.merchantId,
      apiSecret: DEMO_GATEWAY.apiKey,
    });
    const link = await linkConfigs.create({
      merchantId: merchant.id,
      name: "Demo payment link",
      url: demoLinkUrl(base),
      currency: 116,
      protocol: DEMO_LINK_PROTOCOL,
    });
    const qrKey = await admin.createApiKey({ merchantId: merchant.id, kind: "qr", label: "demo qr" });
    const gwKey = await admin.createApiKey({
      merchantId: merchant.id,
      kind: "gateway",
      label: "demo gateway",
      gatewayConfigId: gw.id,
    });
    const linkKey = await admin.createApiKey({
      merchantId: merchant.id,
      kind: "gateway_link",
      label: "demo link",
      linkConfigId: link.id,
    });
    const secret = WebhookEndpointService.newSecret();
    const endpoints = [];
    for (const key of [qrKey, gwKey, linkKey])
      endpoints.push(await webhooks.create({ apiKeyId: key.key.id, url: `${base}/sim/inbox`, secret }));
    demo = {
      baseUrl: base,
      adminToken: "",
      keys: { qr: qrKey.plain, gateway: gwKey.plain, gatewayLink: linkKey.plain },
      webhook: { url: `${base}/sim/inbox`, secret },
      simulators: { network: `${base}/sim/network-api`, gateway: `${base}/sim/gateway-api`, link: demoLinkUrl(base) },
      ids: {
        merchant: merchant.id,
        qrKey: qrKey.key.id,
        gatewayKey: gwKey.key.id,
        linkKey: linkKey.key.id,
        linkConfig: link.id,
        webhook: endpoints[0].endpoint.id,
      },
    };
  }
  demo.adminToken = app.core.auth.adminTokenForDemo();
  demo.simulators = { network: `${base}/sim/network-api`, gateway: `${base}/sim/gateway-api`, link: demoLinkUrl(base) };
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(file, JSON.stringify(demo, null, 2), { mode: 0o600 });
  print(banner(demo, file));
  return demo;
}

function banner(d: DemoFile, file: string): string {
  const lines = [
    "",
    "  Payment QR Service — demo mode (embedded simulators; nothing leaves this machine)",
    "",
    `  GraphQL / Apollo Sandbox  ${d.baseUrl}/graphql`,
    `  Dashboard                 ${d.baseUrl}/dashboard`,
    `  Webhook inbox             ${d.baseUrl}/sim/inbox`,
    `  Admin token               ${d.adminToken}`,
    `  qr key (api-key)          ${d.keys.qr}`,
    `  gateway key (api-gateway) ${d.keys.gateway}`,
    `  link key (api-gateway-link) ${d.keys.gatewayLink}`,
    `  Webhook secret            ${d.webhook.secret}`,
    "",
    `  Try: curl -s ${d.baseUrl}/qr/generate -H 'content-type: application/json' -H 'x-auth-type: api-key' \\`,
    `         -H 'x-api-key: ${d.keys.qr}' -d '{"amount":1.5,"currency":840,"expiredAfter":120000}'`,
    `  Pay on the simulators: POST ${d.baseUrl}/sim/network/pay {"md5"}, /sim/gateway/pay {"tranId","outcome"},`,
    `         /sim/link/approve {"clientId"} (all controls: README, "Simulator controls")`,
    `  All of this is in ${file}`,
    "",
  ];
  return `${lines.join("\n")}\n`;
}
