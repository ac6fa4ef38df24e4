import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { App } from "../app.js";
import { writeFileAtomic } from "../db/data-dir.js";
import { WebhookEndpointService } from "../webhooks/endpoint-service.js";
import { webhooksModule } from "../webhooks/index.js";
import { DEMO_SEEDS, type DemoSeed } from "./seeds.js";

export interface DemoFile {
  baseUrl: string;
  adminToken: string;
  keys: { qr: string; gateway: string; gatewayLink: string };
  webhook: { url: string; secret: string };
  simulators: { network: string; gateway: string; link: string };
  /** Not among the documented demo.json fields; kept so a restart finds the same tenant. */
  ids?: { merchant: string; qrKey: string; gatewayKey: string; linkKey: string; linkConfig: string; webhook: string };
}

/** The demo merchant's deeplink settings: its generic QRs carry a deeplink (issue 20). */
const DEMO_DEEPLINK = {
  deeplinkAppName: "Demo Coffee",
  deeplinkAppIconUrl: "https://demo-coffee.example/icon.png",
  deeplinkCallback: "democoffee://payment-done",
};

/**
 * The demo tenant of `npm start`: a merchant, one key of each area that has a demo seed (`DEMO_SEEDS`, keyed by
 * area), a webhook endpoint pointing at the built-in inbox; printed and written to DATA_DIR/demo.json. Restarting
 * reuses the same tenant and keys.
 *
 * `print` receives the banner (keys, URLs, what to try): main.ts prints it on stdout; a test that seeds a demo
 * in its own process passes nothing, so its output stays the test runner's.
 */
export async function seedDemo(app: App, print: (banner: string) => void = () => undefined): Promise<DemoFile> {
  const { config, admin } = app.core;
  const webhooks = app.module(webhooksModule).endpoints;
  const seeds = app.core.kinds.kinds().flatMap((kind) => (DEMO_SEEDS[kind] ? [DEMO_SEEDS[kind]] : []));
  const file = join(config.dataDir, "demo.json");
  const base = app.url;
  const previous = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as DemoFile) : null;
  const existing = previous?.ids ? await admin.merchant(previous.ids.merchant) : null;
  let demo: DemoFile;
  if (previous?.ids && existing) {
    demo = { ...previous, baseUrl: base };
    // The port may differ from the last run: keep the tenant's URLs pointing at this process.
    const ids = previous.ids as unknown as Record<string, string>;
    for (const seed of seeds) await seed.refresh?.(app, ids, base);
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
    const keys: Record<string, string> = {};
    const ids: Record<string, string> = { merchant: merchant.id };
    const secret = WebhookEndpointService.newSecret();
    const endpoints = [];
    for (const seed of seeds) {
      const bound = (await seed.target?.(app, merchant.id, base)) ?? { input: {}, ids: {} };
      const key = await admin.createApiKey({
        merchantId: merchant.id,
        kind: seed.kind,
        label: seed.label,
        ...bound.input,
      });
      keys[seed.keyField] = key.plain;
      Object.assign(ids, bound.ids, { [seed.idField]: key.key.id });
      endpoints.push(await webhooks.create({ apiKeyId: key.key.id, url: `${base}/sim/inbox`, secret }));
    }
    ids.webhook = endpoints[0]?.endpoint.id ?? "";
    demo = {
      baseUrl: base,
      adminToken: "",
      keys: keys as DemoFile["keys"],
      webhook: { url: `${base}/sim/inbox`, secret },
      simulators: simulatorUrls(seeds, base),
      ids: ids as unknown as DemoFile["ids"],
    };
  }
  demo.adminToken = app.core.auth.adminTokenForDemo();
  demo.simulators = simulatorUrls(seeds, base);
  mkdirSync(config.dataDir, { recursive: true });
  // Only the process holding DATA_DIR's lock gets here (main.ts seeds in serve's demo mode, which takes it), and
  // it replaces the file whole: the quick start's second terminal reads it at any moment.
  writeFileAtomic(file, JSON.stringify(demo, null, 2));
  print(banner(demo, file, seeds));
  return demo;
}

/** demo.json's `simulators`: where each area's simulated upstream is. */
function simulatorUrls(seeds: DemoSeed[], base: string): DemoFile["simulators"] {
  return Object.fromEntries(seeds.map((s) => [s.simulator.name, s.simulator.url(base)])) as DemoFile["simulators"];
}

function banner(d: DemoFile, file: string, seeds: DemoSeed[]): string {
  const keys = d.keys as unknown as Record<string, string>;
  const lines = [
    "",
    "  Payment QR Service — demo mode (embedded simulators; nothing leaves this machine)",
    "",
    `  GraphQL / Apollo Sandbox  ${d.baseUrl}/graphql`,
    `  Dashboard                 ${d.baseUrl}/dashboard`,
    `  Webhook inbox             ${d.baseUrl}/sim/inbox`,
    `  Admin token               ${d.adminToken}`,
    ...seeds.map((s) => `  ${s.bannerLabel.padEnd(25)} ${keys[s.keyField]}`),
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
